//! Which file-system paths (and model servers) the webview may hand to a
//! command. Whatever the webview sends is treated like the documents it
//! shows: possibly written by someone else (script that got past the
//! renderers). A path it names is used only if the person chose it in a
//! native dialog opened from Rust this session, or confirms it now in one;
//! so script in the webview cannot make Folio index, read or write anything
//! the person did not choose. Paths the library already records (its
//! folders and documents) need no grant: the commands that take those only
//! look them up. Nor do the model files and loopback model servers Folio
//! found itself and listed: those are granted as they are listed, the way a
//! dialog grants its pick, since script can name among them only what Folio
//! offered in the first place.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Default)]
pub struct PathGrants {
    granted: Mutex<HashSet<PathBuf>>,
    /// API roots of model servers found answering on loopback, without a
    /// trailing slash.
    servers: Mutex<HashSet<String>>,
}

impl PathGrants {
    pub fn grant(&self, path: &Path) {
        if let Ok(mut granted) = self.granted.lock() {
            granted.insert(path.to_path_buf());
        }
    }

    /// Records that Folio found a model server answering at `base_url`.
    pub fn grant_server(&self, base_url: &str) {
        if let Ok(mut servers) = self.servers.lock() {
            servers.insert(server_key(base_url).to_string());
        }
    }

    /// Whether Folio found a model server at `base_url` this session.
    pub fn server_found(&self, base_url: &str) -> bool {
        self.servers
            .lock()
            .is_ok_and(|servers| servers.contains(server_key(base_url)))
    }

    /// The paths of `paths` not granted yet. A grant covers exactly the path
    /// chosen, not what lies under it: `chosen/../../elsewhere` is another
    /// path.
    pub fn ungranted<'a>(&self, paths: &'a [PathBuf]) -> Vec<&'a PathBuf> {
        let granted = self.granted.lock();
        paths
            .iter()
            .filter(|p| granted.as_ref().map_or(true, |g| !g.contains(*p)))
            .collect()
    }
}

/// Two spellings of one API root, a trailing slash apart, are one server.
fn server_key(base_url: &str) -> &str {
    base_url.trim().trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_chosen_paths_are_granted() {
        let grants = PathGrants::default();
        grants.grant(Path::new("/home/me/notes"));
        let asked: Vec<PathBuf> = [
            "/home/me/notes",
            "/home/me/notes/",
            "/home/me/notes/../.ssh",
            "/home/me/notes/private.md",
            "/etc",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let ungranted: Vec<&str> = grants
            .ungranted(&asked)
            .into_iter()
            .map(|p| p.to_str().unwrap())
            .collect();
        assert_eq!(
            ungranted,
            [
                "/home/me/notes/../.ssh",
                "/home/me/notes/private.md",
                "/etc"
            ]
        );
    }

    #[test]
    fn a_found_server_is_granted_by_its_api_root_alone() {
        let grants = PathGrants::default();
        grants.grant_server("http://127.0.0.1:11434/v1");
        assert!(grants.server_found("http://127.0.0.1:11434/v1/"));
        assert!(!grants.server_found("http://127.0.0.1:11434/v1/../v2"));
        assert!(!grants.server_found("http://127.0.0.1:1234/v1"));
        assert!(!grants.server_found("http://example.com:11434/v1"));
    }
}
