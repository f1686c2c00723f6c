//! One pull loop over an XML part, shared by the loaders of XML-based
//! formats (DOCX, PPTX, XLSX, ODT, EPUB's package files). It resolves
//! namespaces, decodes text, CDATA and entities, and turns malformed XML, a
//! foreign root element or an unclosed element into a Corrupt error that
//! names the part; the loaders only say what each element means.

use std::borrow::Cow;

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

use super::LoadError;
use crate::expansion;

/// An element as it opens: its namespace URI (empty when unbound), its
/// local name, and the byte offset of its `<` in the part.
pub(super) struct Element<'e> {
    pub ns: &'e [u8],
    pub local: &'e [u8],
    pub at: usize,
    start: &'e BytesStart<'e>,
}

impl Element<'_> {
    /// The unescaped value of the attribute with local name `local`,
    /// whatever its prefix (`w:val`, `text:outline-level`, `r:id`, …).
    pub fn attribute(&self, local: &[u8]) -> Option<String> {
        self.start
            .attributes()
            .flatten()
            .find(|a| a.key.local_name().as_ref() == local)
            .and_then(|a| a.unescape_value().ok())
            .map(Cow::into_owned)
    }

    /// How many rows or columns attribute `local` says a table cell spans:
    /// 1 when it is missing or not a number, as the formats define.
    pub fn span_attribute(&self, local: &[u8]) -> u32 {
        self.attribute(local)
            .and_then(|value| value.parse().ok())
            .unwrap_or(1)
    }

    /// Like [`Element::attribute`], for the attribute that carries a
    /// namespace prefix: `r:id` on an element that also has a plain `id`.
    pub fn prefixed_attribute(&self, local: &[u8]) -> Option<String> {
        self.start
            .attributes()
            .flatten()
            .find(|a| a.key.prefix().is_some() && a.key.local_name().as_ref() == local)
            .and_then(|a| a.unescape_value().ok())
            .map(Cow::into_owned)
    }
}

/// Skips an element and everything inside it (a comment, a fallback copy
/// of content): `start` on its opening tag, and the opens and closes inside
/// it, its own close included, report that they are skipped.
#[derive(Default)]
pub(super) struct Skip(u32);

impl Skip {
    pub fn start(&mut self) {
        self.0 = 1;
    }

    pub fn active(&self) -> bool {
        self.0 > 0
    }

    /// An element opens: whether it is skipped.
    pub fn opens(&mut self, empty: bool) -> bool {
        if self.0 > 0 && !empty {
            self.0 += 1;
        }
        self.0 > 0
    }

    /// An element closes: whether it is skipped.
    pub fn closes(&mut self) -> bool {
        let skipped = self.0 > 0;
        self.0 = self.0.saturating_sub(1);
        skipped
    }
}

/// What the walk hands the loader, in document order.
pub(super) enum Node<'e> {
    /// An element opens; `empty` for `<x/>`, which gets no `Close`.
    Open {
        element: Element<'e>,
        empty: bool,
    },
    /// An element closes; `end` is the offset just past its `>`.
    Close {
        ns: &'e [u8],
        local: &'e [u8],
        end: usize,
    },
    Text(&'e str),
}

/// Walks `xml` (the part `part` of a `format` file), whose root element
/// must have the local name `root`, calling `visit` for every element and
/// every piece of text.
pub(super) fn walk(
    xml: &str,
    format: &'static str,
    part: &str,
    root: &[u8],
    mut visit: impl FnMut(Node<'_>),
) -> Result<(), LoadError> {
    let corrupt = |reason: String| LoadError::Corrupt { format, reason };
    let malformed = |e: &dyn std::fmt::Display, at: u64| {
        corrupt(format!("malformed {part} near byte {at}: {e}"))
    };
    let mut reader = NsReader::from_str(xml);
    let mut depth = 0u32;
    let mut saw_root = false;
    // The resolved namespace borrows the reader, which the offsets need
    // too, so it is copied out (into one buffer, reused).
    let mut ns = Vec::new();
    loop {
        // Nothing made from the rest would be kept (crate::expansion).
        if expansion::over() {
            return Ok(());
        }
        let at = offset(reader.buffer_position());
        let event = match reader.read_resolved_event() {
            Ok((resolved, event)) => {
                ns.clear();
                if let ResolveResult::Bound(bound) = resolved {
                    ns.extend_from_slice(bound.0);
                }
                event
            }
            Err(e) => return Err(malformed(&e, reader.error_position())),
        };
        let ns = ns.as_slice();
        match &event {
            Event::Start(start) | Event::Empty(start) => {
                let empty = matches!(event, Event::Empty(_));
                if !saw_root && start.local_name().as_ref() != root {
                    return Err(corrupt(format!(
                        "{part} does not start with a <{}> element",
                        String::from_utf8_lossy(root)
                    )));
                }
                saw_root = true;
                if !empty {
                    depth += 1;
                }
                let local = start.local_name();
                visit(Node::Open {
                    element: Element {
                        ns,
                        local: local.as_ref(),
                        at,
                        start,
                    },
                    empty,
                });
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                visit(Node::Close {
                    ns,
                    local: end.local_name().as_ref(),
                    end: offset(reader.buffer_position()),
                });
            }
            Event::Text(text) => {
                let text = text
                    .xml10_content()
                    .map_err(|e| malformed(&e, reader.buffer_position()))?;
                visit(Node::Text(&text));
            }
            Event::CData(text) => {
                let text = text
                    .decode()
                    .map_err(|e| malformed(&e, reader.buffer_position()))?;
                visit(Node::Text(&text));
            }
            Event::GeneralRef(reference) => {
                let at = reader.buffer_position();
                if let Some(c) = reference
                    .resolve_char_ref()
                    .map_err(|e| malformed(&e, at))?
                {
                    visit(Node::Text(c.encode_utf8(&mut [0; 4])));
                } else {
                    let name = reference.decode().map_err(|e| malformed(&e, at))?;
                    let text = quick_xml::escape::resolve_xml_entity(&name)
                        .ok_or_else(|| corrupt(format!("unknown entity &{name}; in {part}")))?;
                    visit(Node::Text(text));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_root || depth != 0 {
        return Err(corrupt(format!(
            "{part} ends before its elements are closed"
        )));
    }
    Ok(())
}

fn offset(position: u64) -> usize {
    usize::try_from(position).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(xml: &str) -> Result<Vec<String>, LoadError> {
        let mut seen = Vec::new();
        walk(xml, "test", "part.xml", b"r", |node| {
            seen.push(match node {
                Node::Open { element, empty } => format!(
                    "open {}{} {}@{}",
                    String::from_utf8_lossy(element.local),
                    if empty { "/" } else { "" },
                    element.attribute(b"v").unwrap_or_default(),
                    element.at
                ),
                Node::Close { local, end, .. } => {
                    format!("close {}@{end}", String::from_utf8_lossy(local))
                }
                Node::Text(t) => format!("text {t}"),
            })
        })?;
        Ok(seen)
    }

    #[test]
    fn elements_text_and_entities_come_in_order_with_offsets() {
        let seen =
            events(r#"<r><a:x xmlns:a="u" a:v="1 &amp; 2">f&amp;&#233;</a:x><y/></r>"#).unwrap();
        assert_eq!(
            seen,
            [
                "open r @0",
                "open x 1 & 2@3",
                "text f",
                "text &",
                "text é",
                "close x@54",
                "open y/ @54",
                "close r@62",
            ]
        );
    }

    #[test]
    fn malformed_foreign_unclosed_and_unknown_entities_are_corrupt() {
        for xml in [
            "<r><a></b></r>",
            "<other/>",
            "<r><a>",
            "<r>&nbsp;</r>",
            "text",
            "",
        ] {
            let error = events(xml).unwrap_err().to_string();
            assert!(error.contains("part.xml"), "{xml}: {error}");
        }
    }
}
