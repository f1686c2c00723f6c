//! A bounded walk of one app's folder that survives what people's disks
//! hold: symbolic links are followed (the Hugging Face cache is made of
//! them) with walkdir's loop detection, folders that cannot be read and
//! links that lead nowhere are noted and stepped over, and both the depth
//! and the number of entries looked at are capped, so a folder that links
//! to `/` costs a bounded look and no more.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use super::PassedOver;

/// Entries a walk of one folder looks at before it stops.
pub(super) const MAX_ENTRIES: usize = 20_000;

/// How far one walk goes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    /// Levels below the root; 1 lists the root's own entries.
    pub depth: usize,
    pub entries: usize,
}

/// The files under `root` that `keep` accepts, in file-name order, with
/// what could not be walked added to `passed_over`. A root that does not
/// exist holds nothing: the app is not installed.
pub(super) fn files(
    root: &Path,
    bounds: Bounds,
    keep: impl Fn(&Path) -> bool,
    passed_over: &mut Vec<PassedOver>,
) -> Vec<PathBuf> {
    if !root.exists() {
        return Vec::new();
    }
    let mut kept = Vec::new();
    let walk = WalkDir::new(root)
        .follow_links(true)
        .max_depth(bounds.depth)
        .sort_by_file_name();
    for (seen, entry) in walk.into_iter().enumerate() {
        if seen == bounds.entries {
            passed_over.push(PassedOver {
                path: root.to_path_buf(),
                reason: format!(
                    "stopped after looking at {} entries; files past them are not listed",
                    bounds.entries
                ),
            });
            break;
        }
        match entry {
            Ok(entry) if entry.file_type().is_file() && keep(entry.path()) => {
                kept.push(entry.into_path())
            }
            Ok(_) => {}
            Err(e) => passed_over.push(PassedOver {
                path: e.path().unwrap_or(root).to_path_buf(),
                reason: match (e.loop_ancestor(), e.io_error()) {
                    (Some(ancestor), _) => {
                        format!(
                            "a symbolic link back to {}, not followed",
                            ancestor.display()
                        )
                    }
                    (None, Some(io)) if io.kind() == std::io::ErrorKind::NotFound => {
                        "a symbolic link to nothing".to_string()
                    }
                    (None, Some(io)) => format!("cannot be read: {io}"),
                    (None, None) => e.to_string(),
                },
            }),
        }
    }
    kept
}

/// Whether `path` is named as a GGUF file is (`.gguf`, any case).
pub(super) fn is_gguf(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("gguf"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDE: Bounds = Bounds {
        depth: 8,
        entries: MAX_ENTRIES,
    };

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"x").unwrap();
    }

    #[test]
    fn a_symlink_loop_is_noted_and_the_rest_is_walked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("a/model.gguf"));
        std::os::unix::fs::symlink(root, root.join("a/up")).unwrap();
        touch(&root.join("b/other.GGUF"));
        touch(&root.join("b/notes.txt"));
        let mut passed = Vec::new();
        let found = files(root, WIDE, is_gguf, &mut passed);
        assert_eq!(
            found,
            vec![root.join("a/model.gguf"), root.join("b/other.GGUF")]
        );
        assert_eq!(passed.len(), 1, "{passed:?}");
        assert_eq!(passed[0].path, root.join("a/up"));
        assert!(
            passed[0].reason.contains("symbolic link back to"),
            "{passed:?}"
        );
    }

    #[test]
    fn depth_and_entries_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("1/2/3/deep.gguf"));
        for i in 0..10 {
            touch(&root.join(format!("wide/{i}.gguf")));
        }
        let mut passed = Vec::new();
        let shallow = Bounds {
            depth: 3,
            entries: MAX_ENTRIES,
        };
        let found = files(root, shallow, is_gguf, &mut passed);
        assert_eq!(found.len(), 10, "{found:?}");
        assert!(passed.is_empty());
        let few = Bounds {
            depth: 8,
            entries: 6,
        };
        let found = files(root, few, is_gguf, &mut passed);
        assert!(found.len() < 6, "{found:?}");
        assert!(
            passed[0].reason.contains("stopped after looking at 6"),
            "{passed:?}"
        );
    }

    #[test]
    fn a_dangling_link_is_noted_and_a_missing_root_holds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("x.gguf")).unwrap();
        let mut passed = Vec::new();
        assert!(files(dir.path(), WIDE, is_gguf, &mut passed).is_empty());
        assert_eq!(passed[0].reason, "a symbolic link to nothing");
        let mut none = Vec::new();
        assert!(files(&dir.path().join("absent"), WIDE, is_gguf, &mut none).is_empty());
        assert!(none.is_empty());
    }
}
