//! A folder of hostile files: each bad file becomes a per-file error with a
//! reason (or a lossy decode with a note), and the good files around them are
//! indexed all the same.

mod common;

use std::path::Path;

use common::engine::{assert_consistent, ingest, open_with_limit};
use common::fixtures::{
    docx_bytes, epub_bytes, odt_bytes, pdf_bytes, pptx_bytes, xlsx_bytes, SlideSpec,
};
use folio_engine::documents::prepare::{prepare, Prepared, Reading};
use folio_engine::documents::scan::inspect;
use folio_engine::retrieve::SearchMode;

fn error_of(status: &folio_engine::library::Status, name: &str) -> String {
    status
        .errors
        .iter()
        .find(|e| Path::new(&e.path).file_name().is_some_and(|f| f == name))
        .map(|e| e.error.clone())
        .unwrap_or_else(|| panic!("no error recorded for {name}: {:?}", status.errors))
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_files_are_recorded_with_reasons_and_the_batch_goes_on() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let d = std::fs::canonicalize(docs.path()).unwrap();
    std::fs::write(
        d.join("good.md"),
        "# Good\n\nA perfectly fine note about lighthouses.\n",
    )
    .unwrap();
    std::fs::write(
        d.join("binary.txt"),
        [0x7fu8, b'E', b'L', b'F', 0, 0, 1, 2, 0, 255],
    )
    .unwrap();
    std::fs::write(
        d.join("corrupt.pdf"),
        b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref",
    )
    .unwrap();
    std::fs::write(
        d.join("corrupt.docx"),
        b"PK\x03\x04 this is not really a zip archive",
    )
    .unwrap();
    std::fs::write(d.join("huge.md"), "big ".repeat(5_000)).unwrap();
    std::fs::write(
        d.join("latin1.txt"),
        b"Cr\xe8me br\xfbl\xe9e recipe from the caf\xe9.\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(d.join("nowhere.md"), d.join("dangling.md")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(d.join("pipe.md"))
        .status()
        .unwrap();
    assert!(fifo.success());
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(&d, d.join("sub/loop")).unwrap();
    std::fs::write(d.join("scanned.pdf"), pdf_bytes(None, &[""], &[])).unwrap();
    std::fs::write(
        d.join("report.pdf"),
        pdf_bytes(Some("Report"), &["Quarterly figures for the harbour."], &[]),
    )
    .unwrap();
    std::fs::write(
        d.join("notes.docx"),
        docx_bytes(&[
            (Some("Heading1"), "Minutes"),
            (None, "The committee discussed windmills."),
        ]),
    )
    .unwrap();

    std::fs::write(
        d.join("signals.pptx"),
        pptx_bytes(
            Some("Signals"),
            &[SlideSpec {
                title: Some("Flags"),
                bodies: &["Ships talk by semaphore."],
                notes: Some("Demonstrate the arm positions."),
            }],
        ),
    )
    .unwrap();
    let hulls: &[&[&str]] = &[
        &["Hull", "Growth"],
        &["Ferry", "barnacles"],
        &["Tug", "weed"],
    ];
    std::fs::write(d.join("hulls.xlsx"), xlsx_bytes(&[("Inspection", hulls)])).unwrap();
    std::fs::write(
        d.join("deck.odt"),
        odt_bytes(
            None,
            "<text:h>Deck</text:h><text:p>The capstan hauls the anchor.</text:p>",
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("voyage.epub"),
        epub_bytes(
            "Voyage",
            &[("one.xhtml", "Rigging", "<p>The mizzenmast was split.</p>")],
        ),
    )
    .unwrap();

    let library = open_with_limit(data.path(), 10_000).await;
    let summary = ingest(&library, &d).await;
    let status = library.status().await.unwrap();
    assert_eq!(
        status.jobs[0].state,
        folio_engine::store::JobState::Done,
        "{:?}",
        status.jobs[0]
    );

    assert!(error_of(&status, "binary.txt").contains("binary"));
    assert!(error_of(&status, "corrupt.pdf").contains("pdf"));
    assert!(error_of(&status, "corrupt.docx").contains("docx"));
    assert!(error_of(&status, "huge.md").contains("limit"));
    assert!(error_of(&status, "dangling.md").starts_with("unreadable"));
    assert!(error_of(&status, "pipe.md").contains("not a regular file"));
    assert!(error_of(&status, "loop").starts_with("symlink loop"));
    assert!(error_of(&status, "scanned.pdf").contains("no text layer"));
    assert_eq!(summary.indexed, 8, "{summary:?}");

    let latin1 = library
        .store()
        .document(&d.join("latin1.txt").to_string_lossy())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latin1.status, "indexed");
    assert!(
        latin1
            .note
            .as_deref()
            .unwrap_or("")
            .contains("not valid UTF-8"),
        "{latin1:?}"
    );

    for (query, file) in [
        ("crème brûlée", "latin1.txt"),
        ("lighthouses", "good.md"),
        ("harbour", "report.pdf"),
        ("windmills", "notes.docx"),
        ("semaphore", "signals.pptx"),
        ("arm positions", "signals.pptx"),
        ("barnacles", "hulls.xlsx"),
        ("capstan", "deck.odt"),
        ("mizzenmast", "voyage.epub"),
    ] {
        let hits = library
            .retrieval()
            .search(query, 3, SearchMode::Bm25, None)
            .await
            .unwrap();
        assert!(
            hits.first().is_some_and(|h| h.path.ends_with(file)),
            "{query}: {hits:?}"
        );
    }
    assert_consistent(&library).await;

    // Fixing a file clears its error on the next pass.
    std::fs::write(d.join("binary.txt"), "now it is text about puffins").unwrap();
    library.jobs().reconcile_all().await.unwrap();
    let fixed = library
        .store()
        .document(&d.join("binary.txt").to_string_lossy())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((fixed.status.as_str(), fixed.error), ("indexed", None));
}

#[test]
fn a_file_deleted_between_scan_and_read_counts_as_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleeting.md");
    std::fs::write(&path, "# Soon gone").unwrap();
    let limits = folio_engine::Config::new(None, None).limits();
    let entry = inspect(&path, &limits.ocr).unwrap().unwrap();
    std::fs::remove_file(&path).unwrap();
    let reading = Reading {
        on_page: &|_, _| {},
        interrupted: &|| false,
    };
    assert!(matches!(
        prepare(entry, None, &limits, &reading),
        Prepared::Vanished { .. }
    ));
}
