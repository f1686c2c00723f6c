//! The crates' arrows point one way (docs/architecture.md): each crate of
//! the workspace depends only on crates of a lower layer, and the front
//! ends' libraries stay in the front ends. Cargo refuses a cycle; this
//! refuses an arrow that points up or sideways before it becomes one.

use std::collections::BTreeMap;
use std::path::Path;

use folio_engine::config::checkout;

/// Every crate of the workspace and its layer, lowest first. A crate added
/// to the workspace is placed here, or this test fails.
const LAYERS: &[(&str, u8)] = &[
    ("folio-core", 0),
    ("folio-documents", 1),
    ("folio-embed", 1),
    ("folio-llm", 1),
    ("folio-store", 2),
    ("folio-retrieve", 3),
    ("folio-index", 4),
    ("folio-methods", 5),
    ("folio-engine", 6),
    ("folio-server", 7),
    ("folio", 8),
    ("folio-desktop", 8),
];

/// Libraries only a front end may name: the engine is no command line, no
/// window and no server.
const FRONT_END_ONLY: &[(&str, &str)] = &[
    ("clap", "folio"),
    ("indicatif", "folio"),
    ("rustyline", "folio"),
    ("rexpect", "folio"),
    ("tauri", "folio-desktop"),
    ("tauri-build", "folio-desktop"),
    ("tauri-plugin-dialog", "folio-desktop"),
    ("keyring", "folio-server"),
    ("axum", "folio-server"),
    ("hyper", "folio-server"),
    ("rmcp", "folio-server"),
];

/// Each member's name and the packages it names in any dependency table.
fn members() -> BTreeMap<String, Vec<String>> {
    let root = checkout();
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.push(root.join("src-tauri"));
    dirs.into_iter()
        .map(|dir| manifest(&dir.join("Cargo.toml")))
        .collect()
}

fn manifest(path: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    let name = table["package"]["name"].as_str().unwrap().to_string();
    let deps = ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .filter_map(|kind| table.get(*kind).and_then(|t| t.as_table()))
        .flat_map(|t| t.keys().cloned())
        .collect();
    (name, deps)
}

fn layer(name: &str) -> Option<u8> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
}

#[test]
fn every_crate_depends_only_on_lower_layers() {
    let members = members();
    let mut wrong = Vec::new();
    for (name, deps) in &members {
        let Some(own) = layer(name) else {
            wrong.push(format!("{name} is in no layer: place it in LAYERS"));
            continue;
        };
        for dep in deps.iter().filter(|d| members.contains_key(*d)) {
            let theirs = layer(dep).unwrap_or(u8::MAX);
            if theirs >= own {
                wrong.push(format!(
                    "{name} (layer {own}) depends on {dep} (layer {theirs})"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(members.len(), LAYERS.len(), "a crate in LAYERS is gone");
}

#[test]
fn front_end_libraries_stay_in_the_front_ends() {
    let mut wrong = Vec::new();
    for (name, deps) in members() {
        for (library, owner) in FRONT_END_ONLY {
            if deps.iter().any(|d| d == library) && name != *owner {
                wrong.push(format!(
                    "{name} depends on {library}, which only {owner} may"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The front ends go through the library's handles. `Library::store` and
/// `Library::retrieval` (the engine's `internals` feature) are for the
/// benchmarks, which time the layers under the library; a command or an
/// app view that reached past the handles would bypass what they check.
#[test]
fn only_the_benchmarks_reach_under_the_library() {
    let root = checkout();
    let mut wrong = Vec::new();
    for dir in [
        root.join("crates/folio/src"),
        root.join("crates/folio-server/src"),
        root.join("src-tauri/src"),
    ] {
        for entry in walkdir::WalkDir::new(&dir) {
            let path = entry.unwrap().into_path();
            let in_bench = path.starts_with(root.join("crates/folio/src/bench"));
            if in_bench || path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                if line.contains(".store()") || line.contains(".retrieval()") {
                    wrong.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
