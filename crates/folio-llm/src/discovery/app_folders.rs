//! Where each app keeps its GGUF files and what it calls them: Ollama's
//! manifests and blobs, LM Studio's `<publisher>/<repo>/` folders (now and
//! in its older place), GPT4All's one folder, Jan's folders searched all
//! the way down, and the Hugging Face cache's snapshots. Each file's header
//! is read (`gguf.rs`); files that are no language model, or not the first
//! part of a split one, are passed over with the reason.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::gguf::read_header;
use super::walk::{self, is_gguf, Bounds};
use super::{ollama, App, FoundFile, FoundFiles, PassedOver, Places};

/// Headers read in one search. Each costs up to `gguf::MAX_HEADER_BYTES`
/// of reading; a person with more model files than this has them listed
/// in part, and told so.
const MAX_HEADERS: usize = 512;

/// How one app lays its folder out.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Ollama,
    /// GGUF files down to this depth, named by their headers.
    Files {
        depth: usize,
    },
    /// `models--<org>--<name>/snapshots/<revision>/…/*.gguf`.
    HuggingFace,
}

/// The app folders under `places`, the most used apps first.
fn folders(places: &Places) -> Vec<(App, PathBuf, Layout)> {
    let mut folders = Vec::new();
    let home = places.home.as_deref();
    let under_home = |path: &str| home.map(|home| home.join(path));
    let ollama = places
        .ollama_models
        .clone()
        .or_else(|| under_home(".ollama/models"));
    folders.extend(ollama.map(|root| (App::Ollama, root, Layout::Ollama)));
    for (app, path, depth) in [
        (App::LmStudio, ".lmstudio/models", 3),
        (App::LmStudio, ".cache/lm-studio/models", 3),
        (App::Gpt4All, ".local/share/nomic.ai/GPT4All", 1),
        (App::Jan, "jan/models", 8),
        (App::Jan, ".local/share/Jan/data/models", 8),
        (App::Jan, ".local/share/Jan/data/llamacpp/models", 8),
    ] {
        folders.extend(under_home(path).map(|root| (app, root, Layout::Files { depth })));
    }
    let hub = places
        .hf_hub_cache
        .clone()
        .or_else(|| places.hf_home.as_ref().map(|home| home.join("hub")))
        .or_else(|| under_home(".cache/huggingface/hub"));
    folders.extend(hub.map(|root| (App::HuggingFace, root, Layout::HuggingFace)));
    folders
}

pub(super) fn find(places: &Places) -> FoundFiles {
    let mut search = Search::default();
    for (app, root, layout) in folders(places) {
        match layout {
            Layout::Ollama => {
                for model in ollama::models(&root, &mut search.found.passed_over) {
                    search.consider(app, &root, &model.blob, Some(model.name));
                }
            }
            Layout::Files { depth } => {
                let bounds = Bounds {
                    depth,
                    entries: walk::MAX_ENTRIES,
                };
                for path in walk::files(&root, bounds, is_gguf, &mut search.found.passed_over) {
                    search.consider(app, &root, &path, None);
                }
            }
            Layout::HuggingFace => {
                let bounds = Bounds {
                    depth: 8,
                    entries: walk::MAX_ENTRIES,
                };
                let in_a_snapshot = |path: &Path| is_gguf(path) && in_snapshot(&root, path);
                for path in walk::files(&root, bounds, in_a_snapshot, &mut search.found.passed_over)
                {
                    search.consider(app, &root, &path, None);
                }
            }
        }
    }
    search.found
}

/// Whether `path` lies in a snapshot of a model repository of the hub
/// cache at `root` (datasets and spaces hold no models to run).
fn in_snapshot(root: &Path, path: &Path) -> bool {
    let mut parts = match path.strip_prefix(root) {
        Ok(relative) => relative.iter(),
        Err(_) => return false,
    };
    let repo = parts.next().and_then(|p| p.to_str());
    repo.is_some_and(|r| r.starts_with("models--")) && parts.next() == Some(OsStr::new("snapshots"))
}

#[derive(Default)]
struct Search {
    found: FoundFiles,
    /// Each file once per app and name: a hub cache's revisions share
    /// blobs, and two Ollama tags of one model are two names.
    seen: HashSet<(App, PathBuf, Option<String>)>,
    headers_read: usize,
    stopped: bool,
}

impl Search {
    /// Lists the file at `path` if its header is a language model's.
    fn consider(&mut self, app: App, root: &Path, path: &Path, app_name: Option<String>) {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !self.seen.insert((app, canonical, app_name.clone())) {
            return;
        }
        if self.headers_read == MAX_HEADERS {
            if !self.stopped {
                self.stopped = true;
                self.pass_over(
                    root,
                    format!("stopped after reading {MAX_HEADERS} GGUF headers; files past them are not listed"),
                );
            }
            return;
        }
        self.headers_read += 1;
        let header = match read_header(path) {
            Ok(header) => header,
            Err(e) => return self.pass_over(path, format!("not a usable GGUF file: {e}")),
        };
        if header.is_projector() {
            return self.pass_over(
                path,
                "a vision projector (architecture clip), which goes with a model and cannot answer alone".into(),
            );
        }
        if let Some(split) = header.split.filter(|s| s.index > 0) {
            return self.pass_over(
                path,
                format!(
                    "part {} of {} of a split model, which is listed by its first part",
                    split.index + 1,
                    split.count
                ),
            );
        }
        let bytes = match std::fs::metadata(path) {
            Ok(metadata) => metadata.len(),
            Err(e) => return self.pass_over(path, format!("cannot be read: {e}")),
        };
        let file_name = || {
            path.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        };
        self.found.files.push(FoundFile {
            app,
            name: app_name
                .or_else(|| header.name.clone())
                .unwrap_or_else(file_name),
            path: path.to_path_buf(),
            bytes,
            header,
        });
    }

    fn pass_over(&mut self, path: &Path, reason: String) {
        self.found.passed_over.push(PassedOver {
            path: path.to_path_buf(),
            reason,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_move_ollama_and_the_hub_cache_and_hf_home_counts_below_hf_hub_cache() {
        let places = Places {
            home: Some("/home/u".into()),
            ollama_models: Some("/srv/ollama".into()),
            hf_hub_cache: None,
            hf_home: Some("/data/hf".into()),
            ports: Vec::new(),
        };
        let roots: Vec<(App, PathBuf)> = folders(&places)
            .into_iter()
            .map(|(app, root, _)| (app, root))
            .collect();
        assert_eq!(roots[0], (App::Ollama, "/srv/ollama".into()));
        assert_eq!(
            roots.last().unwrap(),
            &(App::HuggingFace, "/data/hf/hub".into())
        );
        let cache = Places {
            hf_hub_cache: Some("/cache/hub".into()),
            ..places
        };
        assert_eq!(
            folders(&cache).last().unwrap().1,
            PathBuf::from("/cache/hub")
        );
        let bare = folders(&Places::home(Path::new("/home/u")));
        assert_eq!(bare[0].1, PathBuf::from("/home/u/.ollama/models"));
        assert_eq!(
            bare.last().unwrap().1,
            PathBuf::from("/home/u/.cache/huggingface/hub")
        );
        assert!(folders(&Places {
            home: None,
            ..Places::home(Path::new("/"))
        })
        .is_empty());
    }

    #[test]
    fn only_model_snapshots_of_the_hub_cache_count() {
        let root = Path::new("/hub");
        assert!(in_snapshot(
            root,
            Path::new("/hub/models--a--b/snapshots/r/x.gguf")
        ));
        assert!(in_snapshot(
            root,
            Path::new("/hub/models--a--b/snapshots/r/q4/x.gguf")
        ));
        assert!(!in_snapshot(
            root,
            Path::new("/hub/models--a--b/blobs/x.gguf")
        ));
        assert!(!in_snapshot(
            root,
            Path::new("/hub/datasets--a--b/snapshots/r/x.gguf")
        ));
    }
}
