//! Which file-system paths the webview may hand to a command. Whatever the
//! webview sends is treated like the documents it shows: possibly written by
//! someone else (script that got past the renderers). A path it names is
//! used only if the person chose it in a native dialog opened from Rust
//! this session, or confirms it now in one; so script in the webview cannot
//! make Folio index, read or write anything the person did not choose.
//! Paths the library already records (its folders and documents) need no
//! grant: the commands that take those only look them up.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Default)]
pub struct PathGrants {
    granted: Mutex<HashSet<PathBuf>>,
}

impl PathGrants {
    pub fn grant(&self, path: &Path) {
        if let Ok(mut granted) = self.granted.lock() {
            granted.insert(path.to_path_buf());
        }
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
}
