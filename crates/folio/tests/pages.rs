//! A PDF as the app's page viewer gets it, through the library on real parts
//! (SQLite files, the embedding model): the file's bytes, and where a passage
//! that search found is drawn on its page, from the boxes stored at indexing.

mod common;

use std::path::Path;

use common::engine::{ingest, open, open_with_limit};
use common::fixtures::pdf_bytes;
use folio_engine::retrieve::SearchMode;
use folio_engine::store::PassageBoxes;
use folio_engine::Error;

#[tokio::test(flavor = "multi_thread")]
async fn a_found_pdf_passage_maps_to_the_lines_it_is_drawn_on() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let docs = std::fs::canonicalize(docs.path()).unwrap();
    let pdf = pdf_bytes(
        Some("Orchard"),
        &[
            "Apples grow on trees in the orchard.",
            "Pears are picked in late summer,\nbefore they soften on the branch.",
        ],
        &[],
    );
    let pdf_path = docs.join("orchard.pdf");
    let notes_path = docs.join("notes.md");
    std::fs::write(&pdf_path, &pdf).unwrap();
    std::fs::write(&notes_path, "# Notes\n\nQuinces are for jelly.\n").unwrap();
    let library = open(data.path()).await;
    ingest(&library, &docs).await;

    let hits = library
        .retrieval()
        .search("when are pears picked", 1, SearchMode::Bm25, None)
        .await
        .unwrap();
    let hit = &hits[0];
    assert_eq!(Path::new(&hit.path), pdf_path);
    assert_eq!(hit.page, Some(2));
    let place = library
        .passage_boxes(&pdf_path, 2, hit.span_start, hit.span_end)
        .await
        .unwrap();
    let PassageBoxes::Drawn { boxes } = place else {
        panic!("the passage has no boxes: {place:?}");
    };
    // Two lines of 12-point text with baselines at 770 and 756, from x = 72.
    assert_eq!(boxes.len(), 2, "{boxes:?}");
    assert!((boxes[0].y0 - 767.6).abs() < 0.01 && (boxes[1].y0 - 753.6).abs() < 0.01);
    assert!(boxes
        .iter()
        .all(|b| (b.x0 - 72.0).abs() < 0.01 && b.x1 > 200.0));

    // A span no stored chunk has (the file changed since it was cited), or
    // another page: gone, which is not an error.
    for (page, start) in [(2, hit.span_start + 1), (1, hit.span_start)] {
        let place = library
            .passage_boxes(&pdf_path, page, start, hit.span_end)
            .await
            .unwrap();
        assert_eq!(place, PassageBoxes::Gone);
    }

    // A chunk stored without boxes (indexed before Folio kept them, as
    // migration 5 leaves every older chunk) is there, but not placed.
    sqlx::query("UPDATE chunks SET boxes = NULL")
        .execute(library.store().pool())
        .await
        .unwrap();
    let place = library
        .passage_boxes(&pdf_path, 2, hit.span_start, hit.span_end)
        .await
        .unwrap();
    assert_eq!(place, PassageBoxes::Unrecorded);

    assert_eq!(library.pdf_bytes(&pdf_path).await.unwrap(), pdf);
    assert!(matches!(
        library.pdf_bytes(&notes_path).await,
        Err(Error::NotPdf(_))
    ));
    assert!(matches!(
        library.passage_boxes(&notes_path, 1, 0, 10).await,
        Err(Error::NotPdf(_))
    ));
    assert!(matches!(
        library.pdf_bytes(&docs.join("elsewhere.pdf")).await,
        Err(Error::NotFound(_))
    ));
    drop(library);

    // A file over the size limit (lowered here since it was indexed) is
    // refused with the limit named, not read into memory.
    let strict = open_with_limit(data.path(), 64).await;
    let err = strict.pdf_bytes(&pdf_path).await.unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("--max-file-size"), "{err}");
}
