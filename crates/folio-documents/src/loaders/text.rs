//! Plain text: a root named after the file over one content node per
//! paragraph, a paragraph being a run of lines between blank lines. The
//! paragraph splitter is shared with the PDF loader, whose page text has the
//! same shape.

use std::ops::Range;

use crate::structure_tree::{NodeKind, Span, StructureTree, ROOT};

pub(super) fn parse(text: &str, fallback_title: &str) -> StructureTree {
    let mut tree = StructureTree::new(fallback_title, Span::default());
    for range in paragraphs(text) {
        tree.push(
            ROOT,
            NodeKind::Content,
            &text[range.clone()],
            Span::bytes(range.start, range.end),
        );
    }
    tree
}

/// Byte ranges of the paragraphs in `text`: runs of lines separated by lines
/// that are empty or whitespace only. Each range is trimmed of surrounding
/// whitespace, so it is never empty and always lies on char boundaries.
pub(super) fn paragraphs(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut offset = 0;
    let mut current: Option<Range<usize>> = None;
    let mut lines = text.split_inclusive('\n');
    std::iter::from_fn(move || loop {
        let Some(line) = lines.next() else {
            return current.take();
        };
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if let Some(done) = current.take() {
                return Some(done);
            }
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        let end = start + lead + trimmed.len();
        match &mut current {
            Some(range) => range.end = end,
            None => current = Some(start + lead..end),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(tree: &StructureTree) -> Vec<&str> {
        tree.nodes()[1..].iter().map(|n| n.text.as_str()).collect()
    }

    #[test]
    fn paragraphs_split_on_blank_and_whitespace_lines() {
        let src = "First line\nstill first\n\n  \t \nSecond\r\n\r\nThird  \n";
        let tree = parse(src, "notes");
        assert_eq!(tree.title(), "notes");
        assert_eq!(
            texts(&tree),
            vec!["First line\nstill first", "Second", "Third"]
        );
        for n in &tree.nodes()[1..] {
            assert_eq!(n.parent, Some(ROOT));
            assert_eq!(n.kind, NodeKind::Content);
            assert_eq!(&src[n.span.start..n.span.end], n.text);
        }
    }

    #[test]
    fn leading_indentation_is_outside_the_span() {
        let src = "\n\n   indented para\n";
        let tree = parse(src, "t");
        let n = tree.node(1);
        assert_eq!(n.text, "indented para");
        assert_eq!(n.span, Span::bytes(5, 18));
    }

    #[test]
    fn empty_and_blank_inputs_have_only_a_root() {
        assert_eq!(parse("", "t").len(), 1);
        assert_eq!(parse(" \n\n\t\n", "t").len(), 1);
    }

    #[test]
    fn no_trailing_newline_and_unicode_whitespace() {
        let src = "ä\u{3000}\n\u{3000}\nö";
        assert_eq!(texts(&parse(src, "t")), vec!["ä", "ö"]);
    }
}
