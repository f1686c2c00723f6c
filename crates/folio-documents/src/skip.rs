//! What Folio never reads under a watched folder: hidden files and folders
//! (a notes vault's `.obsidian/` and `.trash/`, `.git/`, editors' swap
//! files) and whatever a `.folioignore` names, in gitignore's syntax, in
//! the folder it sits in and below. The scan and the watcher ask the same
//! [`SkipRules`], so a file one skips the other never indexes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

/// The file whose lines name what to skip, as `.gitignore` does.
pub const IGNORE_FILE: &str = ".folioignore";

/// The rules under one watched root, each folder's `.folioignore` read once.
#[derive(Debug)]
pub struct SkipRules {
    root: PathBuf,
    /// Each folder's rules, `None` where it has no `.folioignore`.
    folders: HashMap<PathBuf, Option<Gitignore>>,
}

impl SkipRules {
    pub fn new(root: &Path) -> SkipRules {
        SkipRules {
            root: root.to_path_buf(),
            folders: HashMap::new(),
        }
    }

    /// Whether `path` (below the root; `is_dir` says whether it is a
    /// folder) is skipped: hidden, or named by a `.folioignore` of a folder
    /// above it, the deepest one that speaks deciding (a `!pattern` there
    /// takes back what a shallower one named).
    pub fn skips(&mut self, path: &Path, is_dir: bool) -> bool {
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return false;
        };
        if relative
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        {
            return true;
        }
        let mut folder = self.root.clone();
        let mut folders = vec![folder.clone()];
        let parts: Vec<_> = relative.components().collect();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            folder.push(part);
            folders.push(folder.clone());
        }
        let mut skipped = false;
        for folder in folders {
            match self
                .rules(&folder)
                .map(|r| r.matched_path_or_any_parents(path, is_dir))
            {
                Some(Match::Ignore(_)) => skipped = true,
                Some(Match::Whitelist(_)) => skipped = false,
                _ => {}
            }
        }
        skipped
    }

    /// `folder`'s rules, read the first time they are asked for. An
    /// unreadable or malformed line is left out; the rest still count.
    fn rules(&mut self, folder: &Path) -> Option<&Gitignore> {
        self.folders
            .entry(folder.to_path_buf())
            .or_insert_with(|| {
                let file = folder.join(IGNORE_FILE);
                if !file.is_file() {
                    return None;
                }
                let mut builder = GitignoreBuilder::new(folder);
                // Errors name the lines that could not be read; the others are kept.
                let _ = builder.add(&file);
                builder.build().ok()
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_paths_and_what_folioignore_names_are_skipped_deepest_rule_last() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("drafts/keep")).unwrap();
        std::fs::create_dir_all(root.join("notes")).unwrap();
        std::fs::write(root.join(IGNORE_FILE), "drafts/\n*.tmp.md\n# a comment\n").unwrap();
        std::fs::write(root.join("notes").join(IGNORE_FILE), "private.md\n").unwrap();
        let mut rules = SkipRules::new(root);
        assert!(rules.skips(&root.join(".obsidian/workspace.md"), false));
        assert!(rules.skips(&root.join(".trash"), true));
        assert!(rules.skips(&root.join("drafts"), true));
        assert!(rules.skips(&root.join("drafts/keep/x.md"), false));
        assert!(rules.skips(&root.join("a.tmp.md"), false));
        assert!(rules.skips(&root.join("notes/private.md"), false));
        assert!(!rules.skips(&root.join("private.md"), false));
        assert!(!rules.skips(&root.join("notes/public.md"), false));
        assert!(!rules.skips(&root.join("a.md"), false));
        // A deeper file takes a rule back.
        std::fs::write(root.join("notes").join(IGNORE_FILE), "!b.tmp.md\n").unwrap();
        let mut rules = SkipRules::new(root);
        assert!(!rules.skips(&root.join("notes/b.tmp.md"), false));
        assert!(rules.skips(&root.join("notes/c.tmp.md"), false));
    }
}
