//! A notes vault end to end, with the real CLI and the real embedding
//! model: front matter read as metadata (and one that cannot be read
//! noted, the note kept), inline and nested tags, wikilinks and embeds
//! resolved as notes apps resolve them (name, alias, heading, block),
//! `.obsidian/` and what a `.folioignore` names never indexed, `--tag`
//! scoping a search, a collection and an evaluation, the `links` retriever
//! adding the sections a passage links to (SmolLM2 answering over them),
//! iG²RAG's walk and RDR²'s routes following links, and `folio watch`
//! re-resolving links when a note is renamed, edited or deleted.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::engine::{files_of, folio, folio_json, folio_watch};
use serde_json::Value;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const OWNERSHIP: &str = "---\naliases: [Owning]\ntags:\n  - rust/memory\n---\n# Ownership\n\nEach value has one owner at a time. #borrowing\n\n## Moves\n\nAssigning a String moves it; the old name is no longer valid. ^move-rule\n";

const INDEX: &str = "# Index\n\nStart with [[Ownership]], also called [[Owning|the owning rule]]. #start\n\nSee [[Ownership#Moves]] and the rule [[Ownership#^move-rule]].\n\n![[Ownership]]\n\nLater: [[Missing note]].\n";

/// A vault: two linked notes, one whose front matter is broken, and what
/// is never read (`.obsidian/`, `.trash/`, a `.folioignore`'d folder).
fn vault(root: &Path) {
    write(root, "Ownership.md", OWNERSHIP);
    write(root, "Index.md", INDEX);
    write(
        root,
        "Broken.md",
        "---\ntitle: fine\njust text here\n---\n# Broken front matter\n\nThe body is still indexed.\n",
    );
    write(
        root,
        ".obsidian/workspace.md",
        "# Workspace\n\nlayout state\n",
    );
    write(root, ".trash/Old.md", "# Old\n\nthrown away\n");
    write(root, "drafts/Secret.md", "# Secret\n\nnot for the index\n");
    write(root, ".folioignore", "drafts/\n");
}

/// [`vault`] in a temporary folder, indexed: the folder, the vault, the
/// data folder.
fn indexed_vault() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let notes = root.path().join("vault");
    vault(&notes);
    let data = root.path().join("data");
    let added = folio(&data, &["add", notes.to_str().unwrap()]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    (root, notes, data)
}

fn links(data: &Path, note: &Path) -> Value {
    folio_json(data, &["links", note.to_str().unwrap()])
}

/// Where each outgoing link lands: (as written, embed, path it lands in or "").
fn landings(links: &Value) -> Vec<(String, bool, String)> {
    links["outgoing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let to = l["to"]["path"].as_str().unwrap_or("");
            let name = Path::new(to)
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            (
                l["written"].as_str().unwrap().to_string(),
                l["embed"].as_bool().unwrap(),
                name,
            )
        })
        .collect()
}

fn search_paths(data: &Path, query: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["search", query, "-k", "10"];
    args.extend_from_slice(extra);
    folio_json(data, &args)
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            Path::new(h["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn the_links_retriever_adds_the_sections_a_passage_links_to() {
    let (_root, _notes, data) = indexed_vault();
    let name = |p: &Value| {
        Path::new(p["path"].as_str().unwrap())
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    // One passage searched, then the links it makes followed.
    let ask_by_links = |extra: &[&str]| {
        let mut args = vec![
            "ask",
            "Where do I start, and what comes later?",
            "--retriever",
            "links",
            "-k",
            "1",
        ];
        args.extend_from_slice(extra);
        folio_json(&data, &args)
    };
    let asked = ask_by_links(&["--temperature", "0", "--max-tokens", "40"]);
    let trace = &asked["run"]["trace"];
    let passages = trace["passages"].as_array().unwrap();
    assert_eq!(name(&passages[0]), "Index.md", "{trace}");
    let parts = trace["retrieval"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "{trace}");
    assert_eq!(parts[0]["retriever"], "links");
    assert_eq!(parts[0]["searched"], 1);
    // Index links to Ownership, its "Moves" section and a block in it; at
    // most k (here 1) sections are added, the first link's.
    let followed = parts[0]["followed"].as_array().unwrap();
    assert_eq!(followed.len(), 1, "{trace}");
    assert_eq!(followed[0]["from"], 1);
    assert_eq!(followed[0]["to"], 2);
    assert_eq!(followed[0]["written"], "Ownership");
    assert_eq!(passages.len(), 2);
    assert_eq!(name(&passages[1]), "Ownership.md");
    assert_eq!(passages[1]["number"], 2);

    // A scope that leaves the linked note out leaves its section out too.
    let scoped = ask_by_links(&["--max-tokens", "20", "--tag", "start"]);
    let trace = &scoped["run"]["trace"];
    assert_eq!(trace["passages"].as_array().unwrap().len(), 1, "{trace}");
    assert!(trace["retrieval"][0]["followed"]
        .as_array()
        .unwrap()
        .is_empty());
}

/// iG²RAG's walk and RDR²'s routing follow the vault's links when asked:
/// with no gain graph built, the walk reaches the linked note only along
/// the link, and RDR² routes through the linked note's tree too.
#[test]
fn the_walk_and_the_routes_follow_links_when_asked() {
    let (_root, _notes, data) = indexed_vault();
    let question = "Where do I start, and what comes later?";
    let walk = |extra: &[&str]| {
        let mut args = vec!["ask", question, "--method", "ig2rag", "-k", "2"];
        args.extend_from_slice(&["--set", "h=1", "--max-tokens", "20"]);
        args.extend_from_slice(extra);
        folio_json(&data, &args)["run"]["trace"].clone()
    };
    let alone = walk(&[]);
    assert_eq!(
        files_of(&alone["passages"]),
        ["Index.md"],
        "no graph, no links: the seed alone: {alone}"
    );

    let linked = walk(&["--set", "links=follow"]);
    assert_eq!(linked["links"], "follow");
    assert_eq!(
        files_of(&linked["passages"]),
        ["Index.md", "Ownership.md"],
        "{linked}"
    );
    let edges = linked["edges"].as_array().unwrap();
    assert!(
        edges
            .iter()
            .any(|e| e["link"] == true && e["class"].is_null()),
        "{linked}"
    );

    let mut args = vec!["ask", question, "--method", "rdr2", "--retriever", "links"];
    args.extend_from_slice(&["-k", "1", "--max-tokens", "20"]);
    let routed = folio_json(&data, &args);
    let trace = &routed["run"]["trace"];
    assert_eq!(
        files_of(&trace["routes"]),
        ["Index.md", "Ownership.md"],
        "{trace}"
    );
    assert_eq!(trace["retrieval"][0]["retriever"], "links", "{trace}");
    assert_eq!(trace["retrieval"][0]["followed"][0]["written"], "Ownership");
}

/// The sample vault (`samples/vault`, the dev set's corpus) reads as its
/// README says: its draft is ignored, aliases and nested tags are found,
/// links resolve, and its long keyword table is found by the row asked for.
#[test]
fn the_sample_vault_reads_as_its_readme_says() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let notes = common::engine::samples().join("vault").join("notes");
    let added = folio(&data, &["add", notes.to_str().unwrap()]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    assert!(search_paths(&data, "zanzibarquux", &["--mode", "bm25"]).is_empty());

    let rc = links(&data, &notes.join("smart-pointers/Rc Smart Pointer.md"));
    let aliases: Vec<&str> = rc["aliases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(aliases.contains(&"reference counting"), "{rc}");
    assert!(!rc["backlinks"].as_array().unwrap().is_empty(), "{rc}");
    let unresolved = rc["outgoing"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["to"].is_null())
        .count();
    assert_eq!(unresolved, 0, "{rc}");

    let tags = folio_json(&data, &["tags"]);
    assert!(
        tags.as_array()
            .unwrap()
            .iter()
            .any(|t| t["tag"] == "rust/concurrency/channels"),
        "{tags}"
    );

    let hits = folio_json(
        &data,
        &[
            "search",
            "dyn dynamic dispatch",
            "--mode",
            "bm25",
            "-k",
            "1",
        ],
    );
    assert!(hits[0]["path"]
        .as_str()
        .unwrap()
        .ends_with("Keyword Table.md"));
    assert!(hits[0]["rows"]["first"].as_u64().is_some(), "{hits}");
}

#[test]
fn a_vault_is_read_with_its_links_tags_and_front_matter_and_skips_what_it_hides() {
    let (_root, notes, data) = indexed_vault();

    for hidden in ["workspace", "Old", "Secret"] {
        assert!(
            search_paths(&data, hidden, &[])
                .iter()
                .all(|p| !p.starts_with(hidden)),
            "{hidden} was indexed"
        );
    }

    let ownership = links(&data, &notes.join("Ownership.md"));
    assert_eq!(ownership["aliases"], serde_json::json!(["Owning"]));
    assert_eq!(
        ownership["tags"],
        serde_json::json!(["borrowing", "rust/memory"])
    );
    let back: Vec<(String, bool)> = ownership["backlinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["written"].as_str().unwrap().to_string(),
                b["embed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        back,
        [
            ("Ownership".to_string(), false),
            ("Owning".to_string(), false),
            ("Ownership#Moves".to_string(), false),
            ("Ownership#^move-rule".to_string(), false),
            ("Ownership".to_string(), true),
        ]
    );
    assert!(ownership["backlinks"][0]["context"]
        .as_str()
        .unwrap()
        .contains("the owning rule"));

    let index = links(&data, &notes.join("Index.md"));
    let own = "Ownership.md".to_string();
    assert_eq!(
        landings(&index),
        [
            ("Ownership".to_string(), false, own.clone()),
            ("Owning".to_string(), false, own.clone()),
            ("Ownership#Moves".to_string(), false, own.clone()),
            ("Ownership#^move-rule".to_string(), false, own.clone()),
            ("Ownership".to_string(), true, own.clone()),
            ("Missing note".to_string(), false, String::new()),
        ]
    );
    // A heading and a block land on their own nodes of the target's tree.
    let tree = folio_json(
        &data,
        &["tree", notes.join("Ownership.md").to_str().unwrap()],
    );
    let node_text = |ordinal: &Value| {
        tree["tree"]["nodes"][ordinal.as_u64().unwrap() as usize]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        node_text(&index["outgoing"][2]["to"]["node_ordinal"]),
        "Moves"
    );
    assert!(node_text(&index["outgoing"][3]["to"]["node_ordinal"]).ends_with("^move-rule"));
    assert_eq!(index["outgoing"][0]["to"]["node_ordinal"], 0);
    // The front matter is metadata: its words are not a passage.
    assert!(!tree["tree"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["text"].as_str().unwrap().contains("aliases")));

    // Front matter that cannot be read costs only itself.
    let broken = folio_json(&data, &["tree", notes.join("Broken.md").to_str().unwrap()]);
    assert_eq!(broken["tree"]["nodes"][0]["text"], "Broken front matter");
    assert!(broken["document"]["note"]
        .as_str()
        .unwrap()
        .contains("front matter line 3"));

    // Tags scope a search, nested ones under their parent.
    for tag in ["rust", "rust/memory", "#Borrowing"] {
        let found = search_paths(&data, "owner", &["--tag", tag]);
        assert!(
            !found.is_empty() && found.iter().all(|p| p == "Ownership.md"),
            "{tag}: {found:?}"
        );
    }
    let unknown = folio(&data, &["search", "owner", "--tag", "ru"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("nothing indexed matches"));

    // A collection may name tags: alone, or beside folders, which they narrow.
    let memory = folio_json(&data, &["collections", "save", "memory", "--tag", "#Rust"]);
    assert_eq!(memory["tags"], serde_json::json!(["rust"]));
    assert_eq!(memory["documents"], 1);
    let start = folio_json(
        &data,
        &[
            "collections",
            "save",
            "start",
            notes.to_str().unwrap(),
            "--tag",
            "start",
        ],
    );
    assert_eq!(start["documents"], 1);
    for (collection, note) in [("memory", "Ownership.md"), ("start", "Index.md")] {
        let found = search_paths(&data, "owner", &["--collection", collection]);
        assert!(
            !found.is_empty() && found.iter().all(|p| p == note),
            "{collection}: {found:?}"
        );
    }
    let listed = folio_json(&data, &["collections"]);
    assert_eq!(listed[1]["tags"], serde_json::json!(["start"]), "{listed}");
    let typo = folio(&data, &["collections", "save", "typo", "--tag", "ru"]);
    assert!(!typo.status.success());
    let said = String::from_utf8_lossy(&typo.stderr);
    assert!(
        said.contains("no indexed note carries the tag #ru"),
        "{said}"
    );
    let spaced = folio(&data, &["collections", "save", "spaced", "--tag", "a b"]);
    assert!(!spaced.status.success());
    let said = String::from_utf8_lossy(&spaced.stderr);
    assert!(said.contains("`a b` is not a tag"), "{said}");
    let empty = folio(&data, &["collections", "save", "empty"]);
    assert!(!empty.status.success(), "a collection of nothing was saved");
    let kept = folio_json(&data, &["collections"]);
    let names: Vec<&str> = kept
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["memory", "start"], "nothing refused was saved");
}

/// `folio eval --tag` scopes every question to the corpus's notes with
/// the tag: each row's sources are tagged notes, and the same folder asked
/// with another tag is refused rather than mixed.
#[test]
fn an_evaluation_scoped_to_a_tag_retrieves_only_its_notes() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let out = root.path().join("eval-out");
    let vault = common::engine::samples().join("vault");
    let eval = |tag: &str| {
        let dataset = vault.join("dev.jsonl");
        let corpus = vault.join("notes");
        let args = [
            "eval",
            "--dataset",
            dataset.to_str().unwrap(),
            "--corpus",
            corpus.to_str().unwrap(),
            "--methods",
            "vanilla-rag",
            "--limit",
            "2",
            "--tag",
            tag,
            "--max-tokens",
            "8",
            "--out",
            out.to_str().unwrap(),
        ];
        folio(&data, &args)
    };
    let done = eval("rust/types");
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let typed: Vec<String> = std::fs::read_dir(vault.join("notes/basics"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("rust/types"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let rows = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let mut sources = 0;
    for row in rows.lines() {
        let row: Value = serde_json::from_str(row).unwrap();
        for source in row["sources"].as_array().unwrap() {
            let file = Path::new(source.as_str().unwrap()).file_name().unwrap();
            assert!(
                typed.contains(&file.to_string_lossy().into_owned()),
                "{row}"
            );
            sources += 1;
        }
    }
    assert!(sources > 0, "{rows}");

    let other = eval("rust/ownership");
    assert!(!other.status.success());
    let said = String::from_utf8_lossy(&other.stderr);
    assert!(
        said.contains("tags: #rust/types before, #rust/ownership now"),
        "{said}"
    );
}

/// Polls `check` on `folio links NOTE` until it holds, for at most 60 s.
fn until(data: &Path, note: &Path, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let out = folio(data, &["--json", "links", note.to_str().unwrap()]);
        if out.status.success() {
            let links: Value = serde_json::from_slice(&out.stdout).unwrap();
            if check(&links) {
                return links;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{what}: {links}"
            );
        } else {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_watcher_resolves_links_anew_when_a_note_is_renamed_edited_or_deleted() {
    let (root, notes, data) = indexed_vault();
    let mut watch = folio_watch(&data, &root.path().join("watch.log"));
    std::thread::sleep(Duration::from_secs(2));
    let index = notes.join("Index.md");

    // Renamed: its name no longer reaches it, its alias still does.
    std::fs::rename(notes.join("Ownership.md"), notes.join("Owner.md")).unwrap();
    let moved = until(&data, &index, "the rename seen", |l| {
        landings(l)[0].2.is_empty() && landings(l)[1].2 == "Owner.md"
    });
    assert_eq!(landings(&moved)[2].2, "");

    // Edited: the front matter's tag changes, and a search scoped to the
    // new tag finds it.
    std::fs::write(
        notes.join("Owner.md"),
        OWNERSHIP.replace("rust/memory", "lang/rust"),
    )
    .unwrap();
    let started = Instant::now();
    // Until the edit is indexed, no note has the tag and the search is refused.
    while !folio(&data, &["search", "owner", "--tag", "lang"])
        .status
        .success()
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the new tag never scoped a search"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        search_paths(&data, "owner", &["--tag", "lang"])[0],
        "Owner.md"
    );
    assert!(
        folio(&data, &["search", "owner", "--tag", "rust/memory"])
            .status
            .code()
            != Some(0)
    );

    // Deleted: every link to it is unresolved, and kept as such.
    std::fs::remove_file(notes.join("Owner.md")).unwrap();
    let gone = until(&data, &index, "the deletion seen", |l| {
        landings(l).iter().all(|(_, _, to)| to.is_empty())
    });
    assert_eq!(landings(&gone).len(), 6);

    let _ = watch.kill();
    let _ = watch.wait();
}
