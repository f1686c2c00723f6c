//! The language models a person already has: GGUF files in the folders
//! other apps keep them in (Ollama, LM Studio, GPT4All, Jan, the Hugging
//! Face cache) and OpenAI-compatible servers answering on 127.0.0.1 at those
//! apps' usual ports. Nothing is downloaded, nothing beyond loopback is
//! asked, and nothing found is an error: a folder that cannot be read or a
//! file that is no model is listed as passed over, a server that answers
//! badly is listed with what went wrong, and the rest is still found.
//!
//! Where to look is a [`Places`], which [`Places::from_env`] fills from the
//! real machine; [`discover`] looks at all of it, [`find_files`] and
//! [`probe_servers`] at one half, and [`choose`] turns a name a person
//! typed into the settings that make it the model that answers.

mod app_folders;
pub mod chat_template;
mod choice;
mod error;
pub mod gguf;
mod ollama;
mod servers;
mod walk;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use chat_template::{ChatTemplate, TemplateFamily};
pub use choice::{choose, Chosen};
pub use error::{ChoiceError, GgufError, ProbeError};
pub use gguf::{read_header, GgufHeader, Split};
pub use servers::{FoundServer, ServedModel, PROBE_WAIT};

/// The apps whose folders and ports are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum App {
    Ollama,
    LmStudio,
    #[serde(rename = "gpt4all")]
    Gpt4All,
    Jan,
    HuggingFace,
    LlamaCpp,
    Vllm,
}

impl App {
    pub fn label(self) -> &'static str {
        match self {
            App::Ollama => "Ollama",
            App::LmStudio => "LM Studio",
            App::Gpt4All => "GPT4All",
            App::Jan => "Jan",
            App::HuggingFace => "Hugging Face cache",
            App::LlamaCpp => "llama.cpp",
            App::Vllm => "vLLM",
        }
    }
}

/// A loopback port to ask, and the app that usually listens there. The
/// app is a guess from the port: whatever answers is reported as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerPort {
    pub app: App,
    pub port: u16,
}

/// The ports local model servers listen on unless told otherwise.
pub const USUAL_PORTS: [ServerPort; 5] = [
    ServerPort {
        app: App::Ollama,
        port: 11434,
    },
    ServerPort {
        app: App::LmStudio,
        port: 1234,
    },
    ServerPort {
        app: App::LlamaCpp,
        port: 8080,
    },
    ServerPort {
        app: App::Vllm,
        port: 8000,
    },
    ServerPort {
        app: App::Jan,
        port: 1337,
    },
];

/// Where to look: the home folder, the variables that move an app's
/// folder elsewhere, and the ports to ask. Passed in rather than read
/// inside, so a test can aim discovery at a folder and a port of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    pub home: Option<PathBuf>,
    /// `OLLAMA_MODELS`: Ollama's models folder, instead of `~/.ollama/models`.
    pub ollama_models: Option<PathBuf>,
    /// `HF_HUB_CACHE`: the Hugging Face hub cache itself.
    pub hf_hub_cache: Option<PathBuf>,
    /// `HF_HOME`: the Hugging Face folder whose `hub` is the cache.
    pub hf_home: Option<PathBuf>,
    pub ports: Vec<ServerPort>,
}

impl Places {
    /// This machine's: `$HOME`, the apps' variables where set and not empty,
    /// and [`USUAL_PORTS`].
    pub fn from_env() -> Places {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Places {
            home: dirs::home_dir(),
            ollama_models: var("OLLAMA_MODELS"),
            hf_hub_cache: var("HF_HUB_CACHE"),
            hf_home: var("HF_HOME"),
            ports: USUAL_PORTS.to_vec(),
        }
    }

    /// The folders under `home` alone, no variables and no ports.
    pub fn home(home: &Path) -> Places {
        Places {
            home: Some(home.to_path_buf()),
            ollama_models: None,
            hf_hub_cache: None,
            hf_home: None,
            ports: Vec::new(),
        }
    }
}

/// A GGUF file an app keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct FoundFile {
    /// The app whose folder holds it.
    pub app: App,
    /// The app's name for it (Ollama's `qwen2.5:0.5b`), else the header's
    /// `general.name`, else the file's name.
    pub name: String,
    /// The file llama.cpp opens (for Ollama, the blob the manifest names).
    pub path: PathBuf,
    pub bytes: u64,
    pub header: GgufHeader,
}

/// A file or folder looked at and not listed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct PassedOver {
    pub path: PathBuf,
    pub reason: String,
}

/// The GGUF files found in the apps' folders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct FoundFiles {
    pub files: Vec<FoundFile>,
    pub passed_over: Vec<PassedOver>,
}

/// Everything found on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct Found {
    pub files: Vec<FoundFile>,
    /// The ports something answered on, in the order asked.
    pub servers: Vec<FoundServer>,
    pub passed_over: Vec<PassedOver>,
}

/// Looks in the folders and asks the ports at once; takes as long as the
/// slower of the two, the servers' part at most about twice [`PROBE_WAIT`].
pub async fn discover(places: &Places) -> Found {
    let (files, servers) =
        tokio::join!(find_files_off_thread(places), probe_servers(&places.ports));
    Found {
        files: files.files,
        servers,
        passed_over: files.passed_over,
    }
}

/// The GGUF files in every app's folders under `places`, walking the disk.
pub fn find_files(places: &Places) -> FoundFiles {
    app_folders::find(places)
}

/// [`find_files`] on a thread for blocking work, so the walk never holds an
/// async executor's thread.
async fn find_files_off_thread(places: &Places) -> FoundFiles {
    let walked = places.clone();
    match tokio::task::spawn_blocking(move || find_files(&walked)).await {
        Ok(found) => found,
        Err(e) => FoundFiles {
            files: Vec::new(),
            passed_over: vec![PassedOver {
                path: places.home.clone().unwrap_or_default(),
                reason: format!("the search of the folders stopped: {e}"),
            }],
        },
    }
}

/// What answers on each of `ports` at 127.0.0.1; a port nothing listens
/// on is left out.
pub async fn probe_servers(ports: &[ServerPort]) -> Vec<FoundServer> {
    servers::probe(ports).await
}

/// `text` as it may be printed: control characters (a terminal's escape
/// sequences among them) replaced, and cut to `max_chars` with an
/// ellipsis. For names and lines read from files and servers.
fn printable(text: &str, max_chars: usize) -> String {
    let mut shown: String = text
        .chars()
        .take(max_chars)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    if text.chars().nth(max_chars).is_some() {
        shown.pop();
        shown.push('…');
    }
    shown
}
