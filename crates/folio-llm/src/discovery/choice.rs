//! What `folio models use NAME [MODEL]` means: NAME is a model of the
//! offline kit (`qwen2.5-coder-1.5b`), the path of a GGUF file, the name a
//! found file is listed under (Ollama's `qwen2.5:0.5b`, else the header's
//! `general.name`, else the file's name), or, with MODEL, the address of a
//! server found answering on loopback and one of its models. The choice
//! becomes `[llm]` settings with everything else in them kept.

use std::path::{Path, PathBuf};

use crate::settings::{KitModel, KIT_MODELS};
use crate::{Backend, LlmSettings};

use super::error::ChoiceError;
use super::gguf::read_header;
use super::{find_files_off_thread, probe_servers, FoundFile, FoundServer, Places};

/// A model to make the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chosen {
    /// A kit model, at its place in the models folder.
    Kit { model: KitModel, path: PathBuf },
    /// A GGUF file for the embedded backend.
    File { path: PathBuf },
    /// A model a loopback server serves.
    Served { base_url: String, model: String },
}

impl Chosen {
    /// `current` with this model answering: the backend and the model (and
    /// for a server its address) replaced, every other setting kept.
    pub fn settings(&self, current: LlmSettings) -> LlmSettings {
        match self {
            Chosen::Kit { path, .. } | Chosen::File { path } => LlmSettings {
                backend: Backend::Embedded,
                model: path.display().to_string(),
                ..current
            },
            Chosen::Served { base_url, model } => LlmSettings {
                backend: Backend::Openai,
                model: model.clone(),
                base_url: base_url.clone(),
                ..current
            },
        }
    }
}

/// The model `name` (and, for a server, `model`) means. Kit names and
/// paths are settled without looking further; a server address asks the
/// servers in `places`; any other name is looked for among the files in
/// `places`. An unknown name's error lists what can be used.
pub async fn choose(
    name: &str,
    model: Option<&str>,
    models_dir: &Path,
    places: &Places,
) -> Result<Chosen, ChoiceError> {
    if name.starts_with("http://") || name.starts_with("https://") {
        let model = model.ok_or_else(|| ChoiceError::NoModelGiven {
            base_url: name.to_string(),
        })?;
        return served(name, model, &probe_servers(&places.ports).await);
    }
    if model.is_none() {
        if let Some(kit) = KitModel::named(name) {
            return Ok(Chosen::Kit {
                model: kit,
                path: kit.path(models_dir),
            });
        }
        if Path::new(name).is_file() {
            return file(Path::new(name));
        }
        let found = find_files_off_thread(places).await;
        if let Some(chosen) = listed(name, &found.files)? {
            return Ok(chosen);
        }
        return Err(unknown(
            name,
            models_dir,
            &found.files,
            &probe_servers(&places.ports).await,
        ));
    }
    let (found, servers) =
        tokio::join!(find_files_off_thread(places), probe_servers(&places.ports));
    Err(unknown(name, models_dir, &found.files, &servers))
}

/// A GGUF file named by its path, checked to be a language model.
fn file(path: &Path) -> Result<Chosen, ChoiceError> {
    let shown = path.display().to_string();
    let header = read_header(path).map_err(|source| ChoiceError::BadFile {
        path: shown.clone(),
        source,
    })?;
    if header.is_projector() {
        return Err(ChoiceError::NotLanguageModel {
            path: shown,
            architecture: header.architecture.unwrap_or_default(),
        });
    }
    Ok(Chosen::File {
        path: absolute(path),
    })
}

/// `path` made absolute, since folio.toml reads a relative model path from
/// its own folder, not from where the command ran.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The found file listed as `name`: one file, however many places list
/// it; a name shared by different files is refused with their paths.
fn listed(name: &str, files: &[FoundFile]) -> Result<Option<Chosen>, ChoiceError> {
    let mut paths: Vec<&Path> = Vec::new();
    let mut canonical: Vec<PathBuf> = Vec::new();
    for f in files.iter().filter(|f| f.name == name) {
        let real = std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
        if !canonical.contains(&real) {
            canonical.push(real);
            paths.push(&f.path);
        }
    }
    match paths[..] {
        [] => Ok(None),
        [path] => Ok(Some(Chosen::File {
            path: absolute(path),
        })),
        _ => Err(ChoiceError::Ambiguous {
            name: name.to_string(),
            paths: paths.iter().map(|p| format!("  {}", p.display())).collect(),
        }),
    }
}

fn served(base_url: &str, model: &str, servers: &[FoundServer]) -> Result<Chosen, ChoiceError> {
    let wanted = base_url.trim_end_matches('/');
    let listing = |s: &FoundServer| match &s.error {
        Some(e) => format!("  {} ({})", s.base_url, e),
        None => format!("  {}", s.base_url),
    };
    let server = servers
        .iter()
        .find(|s| s.base_url == wanted && s.error.is_none())
        .ok_or_else(|| ChoiceError::NoServer {
            base_url: base_url.to_string(),
            servers: servers.iter().map(listing).collect(),
        })?;
    if !server.models.iter().any(|m| m.id == model) {
        return Err(ChoiceError::NotServed {
            base_url: server.base_url.clone(),
            model: model.to_string(),
            served: server.models.iter().map(|m| m.id.clone()).collect(),
        });
    }
    Ok(Chosen::Served {
        base_url: server.base_url.clone(),
        model: model.to_string(),
    })
}

/// The error for a name that is nothing found, listing what can be used
/// in the form `folio models use` takes.
fn unknown(
    name: &str,
    models_dir: &Path,
    files: &[FoundFile],
    servers: &[FoundServer],
) -> ChoiceError {
    let mut choices: Vec<String> = KIT_MODELS
        .iter()
        .map(|kit| {
            let missing = if kit.path(models_dir).is_file() {
                ""
            } else {
                ", not fetched yet: scripts/setup.sh"
            };
            format!("  {}  (the kit's {}{missing})", kit.name, kit.label)
        })
        .collect();
    choices.extend(
        files
            .iter()
            .map(|f| format!("  {}  ({}: {})", f.name, f.app.label(), f.path.display())),
    );
    for server in servers.iter().filter(|s| s.error.is_none()) {
        choices.extend(server.models.iter().map(|m| {
            format!(
                "  {} {}  (a server on {}'s port)",
                server.base_url,
                m.id,
                server.usual_app.label()
            )
        }));
    }
    choices.push("  or the path of a GGUF file".to_string());
    ChoiceError::Unknown {
        name: name.to_string(),
        choices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::{App, ServedModel};
    use crate::settings::SMOLLM2;

    fn server(error: Option<&str>) -> FoundServer {
        FoundServer {
            port: 11434,
            usual_app: App::Ollama,
            base_url: "http://127.0.0.1:11434/v1".into(),
            models: vec![ServedModel {
                id: "qwen2.5:0.5b".into(),
                capabilities: None,
            }],
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn a_server_model_is_chosen_by_address_and_id_only_where_it_is_served() {
        let servers = [server(None)];
        let chosen = served("http://127.0.0.1:11434/v1/", "qwen2.5:0.5b", &servers).unwrap();
        let settings = chosen.settings(LlmSettings {
            temperature: 0.7,
            ..LlmSettings::default()
        });
        assert_eq!(settings.backend, Backend::Openai);
        assert_eq!(settings.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(settings.model, "qwen2.5:0.5b");
        assert_eq!(settings.temperature, 0.7, "other settings are kept");
        let error = served("http://127.0.0.1:11434/v1", "llama3", &servers).unwrap_err();
        assert!(
            error.to_string().contains("it serves: qwen2.5:0.5b"),
            "{error}"
        );
        let error = served("http://127.0.0.1:8080/v1", "x", &servers).unwrap_err();
        assert!(
            error.to_string().contains("http://127.0.0.1:11434/v1"),
            "{error}"
        );
        let broken = [server(Some("answered GET /v1/models with HTTP 500"))];
        assert!(matches!(
            served("http://127.0.0.1:11434/v1", "qwen2.5:0.5b", &broken),
            Err(ChoiceError::NoServer { .. })
        ));
    }

    #[test]
    fn the_unknown_names_error_lists_the_kit_files_and_served_models() {
        let dir = tempfile::tempdir().unwrap();
        let error = unknown("nope", dir.path(), &[], &[server(None)]).to_string();
        for expected in [
            "no model is called \"nope\"",
            SMOLLM2.name,
            "not fetched yet",
            "http://127.0.0.1:11434/v1 qwen2.5:0.5b  (a server on Ollama's port)",
            "the path of a GGUF file",
        ] {
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }

    #[tokio::test]
    async fn a_server_address_without_a_model_is_refused_before_anything_is_asked() {
        let places = Places::home(Path::new("/nonexistent"));
        let error = choose("http://127.0.0.1:1/v1", None, Path::new("/m"), &places)
            .await
            .unwrap_err();
        assert!(matches!(error, ChoiceError::NoModelGiven { .. }), "{error}");
    }
}
