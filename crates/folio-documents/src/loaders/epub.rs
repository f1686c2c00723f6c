//! EPUB: the chapters of the spine, in reading order, each read as HTML and
//! grafted under the book as one structure node with its own headings
//! below it; the navigation document (the table of contents) is left out.
//! The book's title is the package's `dc:title`; a chapter is named by its
//! own `<title>` or leading heading (not both when they agree), or "Part N"
//! when that only repeats the book's title. Spans are byte ranges in the chapter's XHTML,
//! with `page` its place in reading order.

use std::collections::HashMap;

use super::html;
use super::package::{member_name, Package};
use super::xml::{walk, Element, Node};
use super::LoadError;
use crate::expansion;
use crate::structure_tree::{NodeKind, Span, StructureTree, ROOT};

const CONTAINER_PART: &str = "META-INF/container.xml";
const ENCRYPTION_PART: &str = "META-INF/encryption.xml";

/// Spine items beyond this many are not read: a real book has hundreds.
const MAX_CHAPTERS: usize = 10_000;

pub(super) fn parse(
    bytes: &[u8],
    fallback_title: &str,
    budget: u64,
) -> Result<StructureTree, LoadError> {
    let mut package = Package::open(bytes, "epub", budget)?;
    let container = package.required_text(CONTAINER_PART, "an EPUB")?;
    let opf_part = rootfile(&container, &package)?;
    let opf = package.required_text(&opf_part, "an EPUB package document")?;
    let opf_dir = opf_part.rsplit_once('/').map_or("", |(dir, _)| dir);
    let chapters = spine(&opf, &opf_part, opf_dir)?;
    refuse_drm(&mut package, &chapters)?;
    let title = package
        .dublin_core_title(&opf_part, b"package")?
        .unwrap_or_else(|| fallback_title.to_owned());
    let mut book = StructureTree::new(title.as_str(), Span::default());
    for (index, member) in chapters.iter().take(MAX_CHAPTERS).enumerate() {
        if expansion::over() {
            break;
        }
        let Some(xhtml) = package.text(member)? else {
            continue;
        };
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let label = format!("Part {number}");
        let mut chapter = html::parse(&xhtml, &label);
        if chapter.len() == 1 {
            continue;
        }
        if chapter.title() == title {
            chapter.set_title(label, chapter.node(ROOT).span);
        }
        book.graft(ROOT, without_repeated_heading(chapter), number);
    }
    if book.len() == 1 {
        return Err(LoadError::Empty {
            reason: "the e-book's chapters have no text".to_owned(),
        });
    }
    Ok(book)
}

/// A chapter whose `<title>` is also its first heading ("Arrival" over
/// "Arrival") with that heading as its root instead.
fn without_repeated_heading(chapter: StructureTree) -> StructureTree {
    let nodes = chapter.nodes();
    let repeated = nodes.get(1).is_some_and(|first| {
        first.kind == NodeKind::Structure
            && first.parent == Some(ROOT)
            && first.text == chapter.title()
    });
    if !repeated {
        return chapter;
    }
    let mut tree = StructureTree::new(nodes[1].text.as_str(), nodes[1].span);
    // Index in `chapter` → index in `tree`; the heading became the root.
    let mut moved = vec![ROOT, ROOT];
    for node in &nodes[2..] {
        let parent = node.parent.map_or(ROOT, |p| moved[p]);
        moved.push(tree.push(parent, node.kind, node.text.as_str(), node.span));
    }
    tree
}

/// The package document `META-INF/container.xml` points at.
fn rootfile(container: &str, package: &Package<'_>) -> Result<String, LoadError> {
    let mut found = None;
    walk(container, "epub", CONTAINER_PART, b"container", |node| {
        if let Node::Open { element, .. } = node {
            if element.local == b"rootfile" && found.is_none() {
                found = element
                    .attribute(b"full-path")
                    .and_then(|path| member_name("", &path));
            }
        }
    })?;
    found.ok_or_else(|| package.corrupt(format!("{CONTAINER_PART} names no package document")))
}

/// The members of the spine, in reading order.
fn spine(opf: &str, part: &str, dir: &str) -> Result<Vec<String>, LoadError> {
    let mut manifest = HashMap::new();
    let mut order = Vec::new();
    walk(opf, "epub", part, b"package", |node| {
        if let Node::Open { element, .. } = node {
            match element.local {
                // The navigation document is the table of contents, which
                // repeats the chapters' names as a list.
                b"item" if is_navigation(&element) => {}
                b"item" => {
                    let href = element
                        .attribute(b"href")
                        .and_then(|h| member_name(dir, &h));
                    if let (Some(id), Some(href)) = (element.attribute(b"id"), href) {
                        manifest.insert(id, href);
                    }
                }
                b"itemref" => order.extend(element.attribute(b"idref")),
                _ => {}
            }
        }
    })?;
    Ok(order
        .into_iter()
        .filter_map(|id| manifest.get(&id).cloned())
        .collect())
}

fn is_navigation(item: &Element<'_>) -> bool {
    item.attribute(b"properties")
        .is_some_and(|p| p.split_whitespace().any(|p| p == "nav"))
}

/// An e-book whose chapters are encrypted (DRM) reads as noise; say so
/// instead. Obfuscated fonts, which EPUB also lists there, do not count.
fn refuse_drm(package: &mut Package<'_>, chapters: &[String]) -> Result<(), LoadError> {
    let Some(xml) = package.text(ENCRYPTION_PART)? else {
        return Ok(());
    };
    let mut encrypted = Vec::new();
    // A malformed list of encrypted parts says nothing either way.
    let _ = walk(&xml, "epub", ENCRYPTION_PART, b"encryption", |node| {
        if let Node::Open { element, .. } = node {
            if element.local == b"CipherReference" {
                encrypted.extend(element.attribute(b"URI").and_then(|u| member_name("", &u)));
            }
        }
    });
    if chapters.iter().any(|c| encrypted.contains(c)) {
        return Err(package.corrupt(
            "the e-book's chapters are encrypted (DRM); Folio can read only unprotected EPUBs"
                .to_owned(),
        ));
    }
    Ok(())
}
