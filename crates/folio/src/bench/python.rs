//! The Python that runs the baselines in `bench/*.py`: `FOLIO_BENCH_PYTHON`
//! (set by scripts/bench.sh to its venv), else `python3`. Checked once, up
//! front, for the packages the baselines import, with a message that says how
//! to get them.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context as _, Result};
use serde_json::Value;

/// The ONNX Runtime the model kit ships; the raw-session baseline must run
/// the same version or the comparison measures two runtimes.
pub const ORT_VERSION: &str = "1.31.1";

const SETUP_HINT: &str =
    "run scripts/bench.sh (it creates .venv-bench with numpy, onnxruntime==1.31.1, \
     tokenizers, scipy, networkx and faiss-cpu), or point FOLIO_BENCH_PYTHON at a python that has them";

pub struct Python {
    exe: PathBuf,
    scripts: PathBuf,
}

impl Python {
    pub fn locate() -> Result<Python> {
        let exe = std::env::var_os("FOLIO_BENCH_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| "python3".into());
        let python = Python {
            exe,
            scripts: folio_engine::config::checkout().join("bench"),
        };
        let probe = Command::new(&python.exe)
            .args([
                "-c",
                "import numpy, tokenizers, scipy, networkx, faiss, onnxruntime; print(onnxruntime.__version__)",
            ])
            .output();
        let out = match probe {
            Ok(out) => out,
            Err(e) => bail!(
                "cannot run the baseline python {}: {e}; {SETUP_HINT}",
                python.exe.display()
            ),
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err.lines().last().unwrap_or("").trim();
            bail!(
                "the baseline python {} lacks a package ({last}); {SETUP_HINT}",
                python.exe.display()
            );
        }
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if version != ORT_VERSION {
            bail!(
                "the baseline python {} has onnxruntime {version}, but the model kit's is {ORT_VERSION}; {SETUP_HINT}",
                python.exe.display()
            );
        }
        Ok(python)
    }

    /// Runs `bench/<script>` with `args` and parses the one JSON object it
    /// prints on stdout; its stderr passes through so failures are visible.
    pub fn run_json(&self, script: &str, args: &[&std::ffi::OsStr]) -> Result<Value> {
        let path = self.scripts.join(script);
        let out = Command::new(&self.exe)
            .arg(&path)
            .args(args)
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running {} {}", self.exe.display(), path.display()))?;
        if !out.status.success() {
            bail!("{} failed ({})", path.display(), out.status);
        }
        serde_json::from_slice(&out.stdout).with_context(|| {
            format!(
                "{} printed something other than one JSON object: {}",
                path.display(),
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }
}

/// A number from a baseline's JSON answer, or an error naming the field.
pub fn field(v: &Value, name: &str) -> Result<f64> {
    v.get(name)
        .and_then(Value::as_f64)
        .with_context(|| format!("the baseline's answer lacks `{name}`: {v}"))
}
