//! Scoped questions on a real index (SQLite, sqlite-vec, FTS5 and the kit's
//! embedding model): every ranker stays inside the scope and still fills
//! its top-k from it, folder boundaries are path components (not string
//! prefixes), formats and days filter, collections follow their folders,
//! and a scope that cannot be used is an error that names why.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::engine::{ingest, open};
use folio_engine::documents::loaders::Format;
use folio_engine::retrieve::SearchMode;
use folio_engine::store::{Scope, ScopeError};
use folio_engine::{Error, Library};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Eight notes about rivers (in `rivers/`) and two about rivers' fish in
/// `rivers-old/`, a sibling whose name starts with `rivers`; a text file
/// and an old file in `rivers/` for the format and day filters.
fn seed(root: &Path) {
    for i in 0..8 {
        write(
            &root.join(format!("rivers/note{i}.md")),
            &format!("# River {i}\n\nThe river number {i} floods its valley every spring, and boats wait.\n"),
        );
    }
    write(
        &root.join("rivers/plain.txt"),
        "A river carries silt to the sea; the delta grows.\n",
    );
    write(
        &root.join("rivers/old.md"),
        "# Old river\n\nAn old river map from long ago.\n",
    );
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_577_836_800); // 2020-01-01
    std::fs::File::options()
        .write(true)
        .open(root.join("rivers/old.md"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    for i in 0..2 {
        write(
            &root.join(format!("rivers-old/fish{i}.md")),
            &format!("# Fish {i}\n\nRiver fish number {i} swim upstream to spawn in the river.\n"),
        );
    }
}

struct Seeded {
    _dir: tempfile::TempDir,
    /// The temporary folder, canonical.
    root: PathBuf,
    /// The seeded notes, indexed.
    docs: PathBuf,
    library: Library,
}

async fn seeded() -> Seeded {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let docs = root.join("docs");
    seed(&docs);
    let library = open(&root.join("data")).await;
    ingest(&library, &docs).await;
    Seeded {
        _dir: dir,
        root,
        docs,
        library,
    }
}

fn place(root: &Path, name: &str) -> String {
    Library::place(&root.join(name))
}

async fn paths(
    library: &Library,
    query: &str,
    k: usize,
    mode: SearchMode,
    scope: &Scope,
) -> Vec<String> {
    library
        .search(query, k, mode, scope)
        .await
        .unwrap_or_else(|e| panic!("{mode:?} in {scope}: {e}"))
        .into_iter()
        .map(|h| h.path)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_ranker_fills_its_top_k_from_inside_the_scope() {
    let Seeded {
        _dir,
        docs,
        library,
        ..
    } = seeded().await;

    let fish = Scope {
        paths: vec![place(&docs, "rivers-old")],
        ..Scope::default()
    };
    let rivers = Scope {
        paths: vec![place(&docs, "rivers")],
        ..Scope::default()
    };
    for memory in [false, true] {
        if memory {
            library.retrieval().warm_vectors().await.unwrap();
        }
        for mode in [SearchMode::Dense, SearchMode::Bm25, SearchMode::Hybrid] {
            // The fish notes rank low for a question about floods; a
            // filtered global top-2 would hold none of them.
            let found = paths(
                &library,
                "Which river floods its valley in spring?",
                2,
                mode,
                &fish,
            )
            .await;
            assert_eq!(found.len(), 2, "{mode:?} (memory: {memory}): {found:?}");
            assert!(
                found.iter().all(|p| p.contains("/rivers-old/")),
                "{found:?}"
            );

            // `rivers` does not take in its sibling `rivers-old`.
            let found = paths(
                &library,
                "river fish swim upstream to spawn",
                10,
                mode,
                &rivers,
            )
            .await;
            assert!(!found.is_empty());
            assert!(
                found.iter().all(|p| p.contains("/rivers/")),
                "{mode:?}: {found:?}"
            );
        }
    }

    let one_file = Scope {
        paths: vec![place(&docs, "rivers/note3.md")],
        ..Scope::default()
    };
    let found = paths(&library, "river", 5, SearchMode::Hybrid, &one_file).await;
    assert_eq!(found, vec![place(&docs, "rivers/note3.md")]);

    let text_only = Scope {
        formats: vec![Format::Text],
        ..Scope::default()
    };
    let found = paths(&library, "river", 5, SearchMode::Dense, &text_only).await;
    assert_eq!(found, vec![place(&docs, "rivers/plain.txt")]);

    // A day keeps files modified on or after its first moment.
    let since_2021 = Scope {
        paths: vec![place(&docs, "rivers")],
        since: Some("2021-01-01".parse().unwrap()),
        ..Scope::default()
    };
    let found: BTreeSet<String> = paths(
        &library,
        "old river map",
        20,
        SearchMode::Dense,
        &since_2021,
    )
    .await
    .into_iter()
    .collect();
    assert_eq!(found.len(), 9, "{found:?}");
    assert!(!found.contains(&place(&docs, "rivers/old.md")));
    let since_2020 = Scope {
        since: Some("2020-01-01".parse().unwrap()),
        ..since_2021
    };
    assert_eq!(library.scope_size(&since_2020).await.unwrap(), Some(10));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scope_that_cannot_be_used_says_why() {
    let Seeded {
        _dir,
        root,
        docs,
        library,
    } = seeded().await;

    let elsewhere = place(&root, "elsewhere");
    let err = library
        .search(
            "river",
            5,
            SearchMode::Hybrid,
            &Scope {
                paths: vec![elsewhere.clone()],
                ..Scope::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Scope(ScopeError::NotIndexed(p)) if *p == elsewhere),
        "{err}"
    );
    assert!(err.is_user_error());
    assert!(err.to_string().contains(&elsewhere));

    let err = library
        .scope_size(&Scope {
            collections: vec!["work".into()],
            ..Scope::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "there is no collection `work`; there are none yet"
    );

    let err = library
        .scope_size(&Scope {
            paths: vec![place(&docs, "rivers-old")],
            formats: vec![Format::Pdf],
            ..Scope::default()
        })
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("nothing indexed matches the scope (in ")
            && err
                .to_string()
                .ends_with("rivers-old; format pdf); widen it"),
        "{err}"
    );
    assert_eq!(library.scope_size(&Scope::default()).await.unwrap(), None);

    // A path typed with a trailing slash, or through a symlink, names the
    // same documents as its canonical form.
    std::os::unix::fs::symlink(docs.join("rivers-old"), root.join("fish-link")).unwrap();
    for typed in [
        format!("{}/", docs.join("rivers-old").display()),
        root.join("fish-link").display().to_string(),
    ] {
        let scope = Scope {
            paths: vec![typed.clone()],
            ..Scope::default()
        };
        assert_eq!(
            library.scope_size(&scope).await.unwrap(),
            Some(2),
            "{typed}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_collection_follows_its_folders_when_a_file_moves_out() {
    let Seeded {
        _dir,
        root,
        docs,
        library,
    } = seeded().await;

    let saved = library
        .collections()
        .save(
            " fish ",
            &[docs.join("rivers-old"), docs.join("rivers-old/")],
            &[],
        )
        .await
        .unwrap();
    assert_eq!(saved.name, "fish");
    assert_eq!(saved.folders, vec![place(&docs, "rivers-old")]);
    assert_eq!(saved.documents, 2);
    let fish = Scope {
        collections: vec!["fish".into()],
        ..Scope::default()
    };
    assert_eq!(library.scope_size(&fish).await.unwrap(), Some(2));

    // A file moved out of the collection's folder leaves the collection.
    std::fs::rename(
        docs.join("rivers-old/fish1.md"),
        docs.join("rivers/fish1.md"),
    )
    .unwrap();
    library.jobs().reconcile_all().await.unwrap();
    assert_eq!(library.scope_size(&fish).await.unwrap(), Some(1));
    let found = paths(&library, "fish swim upstream", 5, SearchMode::Hybrid, &fish).await;
    assert_eq!(found, vec![place(&docs, "rivers-old/fish0.md")]);
    assert_eq!(library.collections().list().await.unwrap()[0].documents, 1);

    // Saving again replaces the folders; a folder outside the library is refused.
    let err = library
        .collections()
        .save("fish", &[root.join("elsewhere")], &[])
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Scope(ScopeError::NotIndexed(_))),
        "{err}"
    );
    let both = library
        .collections()
        .save("fish", &[docs.join("rivers"), docs.join("rivers-old")], &[])
        .await
        .unwrap();
    assert_eq!(both.documents, 12);
    for bad in ["", "   ", "tab\there"] {
        let err = library
            .collections()
            .save(bad, &[docs.clone()], &[])
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::Scope(ScopeError::BadName)),
            "{bad:?}: {err}"
        );
    }

    library.collections().delete("fish").await.unwrap();
    let err = library.collections().delete("fish").await.unwrap_err();
    assert!(err.to_string().starts_with("there is no collection `fish`"));
    assert!(library.collections().list().await.unwrap().is_empty());
}
