//! A document's structure tree: title and headings (`Structure` nodes) over the
//! blocks of text they contain (`Content` nodes), each with its source span.
//! Loaders build it, chunking reads it, the store persists it, and RDR2 routes
//! through it, so it is the one shape every format is turned into.

use serde::{Deserialize, Serialize};

use crate::table::TableShape;

/// Whether a node organises the document (title, heading) or carries its text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Structure,
    Content,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Structure => "structure",
            NodeKind::Content => "content",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "structure" => Some(NodeKind::Structure),
            "content" => Some(NodeKind::Content),
            _ => None,
        }
    }
}

/// Where a node came from, so a citation can open the source at that place.
///
/// `start..end` is a byte range in the loaded text: the file itself for
/// markdown, text and HTML (after decoding, for non-UTF-8 files), the
/// `word/document.xml` part for DOCX, `content.xml` for ODT, and the
/// extracted page text for PDF, where `page` (1-based) says which page.
/// For formats of several parts `page` says which part the range is in:
/// the slide's XML for PPTX (its notes' XML under "Notes"), the sheet's XML
/// for XLSX, the chapter's XHTML for EPUB (its place in reading order).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub page: Option<u32>,
}

impl Span {
    pub fn bytes(start: usize, end: usize) -> Self {
        Span {
            start,
            end,
            page: None,
        }
    }

    pub fn on_page(page: u32, start: usize, end: usize) -> Self {
        Span {
            start,
            end,
            page: Some(page),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct TreeNode {
    pub parent: Option<usize>,
    pub kind: NodeKind,
    pub depth: u32,
    pub text: String,
    pub span: Span,
    /// Set on a content node that is a table (`crate::table`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub table: Option<TableShape>,
}

/// Nodes in document order (a pre-order walk); index 0 is the root, a
/// `Structure` node holding the document's title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct StructureTree {
    nodes: Vec<TreeNode>,
}

pub const ROOT: usize = 0;

/// Bytes `start..end` of node `node`'s text. A chunk is a list of these,
/// its text their text joined by [`RANGE_JOINER`], so the store keeps the
/// ranges and the nodes keep the only copy of the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRange {
    pub node: usize,
    pub start: usize,
    pub end: usize,
}

impl NodeRange {
    /// The range of `text` (a node's text) left once surrounding
    /// whitespace is trimmed, shifted by `offset` bytes.
    pub fn trimmed(node: usize, offset: usize, text: &str) -> NodeRange {
        let start = offset + text.len() - text.trim_start().len();
        NodeRange {
            node,
            start,
            end: (offset + text.trim_end().len()).max(start),
        }
    }
}

/// The nodes `ranges` fall in, in order, each once.
pub fn node_ordinals(ranges: &[NodeRange]) -> Vec<usize> {
    let mut nodes: Vec<usize> = ranges.iter().map(|r| r.node).collect();
    nodes.dedup();
    nodes
}

/// What separates two ranges' text in a chunk: the blank line between
/// merged paragraphs. The store's SQL joins stored ranges with the same two
/// bytes (`char(10, 10)`).
pub const RANGE_JOINER: &str = "\n\n";

impl StructureTree {
    pub fn new(title: impl Into<String>, span: Span) -> Self {
        StructureTree {
            nodes: vec![TreeNode {
                parent: None,
                kind: NodeKind::Structure,
                depth: 0,
                text: title.into(),
                span,
                table: None,
            }],
        }
    }

    /// Appends a node under `parent`. Appending keeps document order only if
    /// callers add nodes in the order they occur, which every loader does.
    /// A node the file being loaded has no budget left for is dropped and
    /// `parent` comes back ([`crate::expansion`]: the file is refused).
    pub fn push(
        &mut self,
        parent: usize,
        kind: NodeKind,
        text: impl Into<String>,
        span: Span,
    ) -> usize {
        let text = text.into();
        if crate::expansion::charge(held(&text)).is_err() {
            return parent;
        }
        let depth = self.nodes[parent].depth + 1;
        self.nodes.push(TreeNode {
            parent: Some(parent),
            kind,
            depth,
            text,
            span,
            table: None,
        });
        self.nodes.len() - 1
    }

    /// Appends a table's content node under `parent` (its text and shape
    /// as [`crate::table::TableText`] makes them), as [`Self::push`] does.
    pub fn push_table(
        &mut self,
        parent: usize,
        text: String,
        shape: TableShape,
        span: Span,
    ) -> usize {
        let id = self.push(parent, NodeKind::Content, text, span);
        if id != parent {
            self.nodes[id].table = Some(shape);
        }
        id
    }

    /// Appends `other` under `parent` as one subtree: its root becomes a
    /// structure node named by its title, and every span it brings is
    /// marked as being on `page` (an e-book's chapter, say).
    pub fn graft(&mut self, parent: usize, other: StructureTree, page: u32) -> usize {
        let offset = self.nodes.len();
        let depth = self.nodes[parent].depth + 1;
        for (index, node) in other.nodes.into_iter().enumerate() {
            self.nodes.push(TreeNode {
                parent: Some(node.parent.map_or(parent, |p| p + offset)),
                kind: if index == ROOT {
                    NodeKind::Structure
                } else {
                    node.kind
                },
                depth: node.depth + depth,
                text: node.text,
                span: Span::on_page(page, node.span.start, node.span.end),
                table: node.table,
            });
        }
        offset
    }

    pub fn nodes(&self) -> &[TreeNode] {
        &self.nodes
    }

    /// The text `ranges` cover, joined by [`RANGE_JOINER`]; `None` when a
    /// range names no node or does not fall on its text's character
    /// boundaries.
    pub fn text_of(&self, ranges: &[NodeRange]) -> Option<String> {
        let mut out = String::new();
        for (i, r) in ranges.iter().enumerate() {
            if i > 0 {
                out.push_str(RANGE_JOINER);
            }
            out.push_str(self.nodes.get(r.node)?.text.get(r.start..r.end)?);
        }
        Some(out)
    }

    pub fn node(&self, id: usize) -> &TreeNode {
        &self.nodes[id]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn title(&self) -> &str {
        &self.nodes[ROOT].text
    }

    pub fn set_title(&mut self, title: impl Into<String>, span: Span) {
        self.nodes[ROOT].text = title.into();
        self.nodes[ROOT].span = span;
    }

    pub fn children(&self, id: usize) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .skip(id + 1)
            .filter(move |(_, n)| n.parent == Some(id))
            .map(|(i, _)| i)
    }

    /// Titles of the structure nodes above `id`, root first; `id` itself is
    /// included when it is a structure node.
    pub fn heading_path(&self, id: usize) -> Vec<&str> {
        let mut path = Vec::new();
        let mut cur = Some(id);
        while let Some(i) = cur {
            let n = &self.nodes[i];
            if n.kind == NodeKind::Structure {
                path.push(n.text.as_str());
            }
            cur = n.parent;
        }
        path.reverse();
        path
    }

    /// The heading path as chunks label their text: "Book > Chapter".
    pub fn heading_label(&self, id: usize) -> String {
        self.heading_path(id).join(" > ")
    }

    /// The document's text as the tree holds it, as markdown: each structure
    /// node a heading of its depth, each content node a paragraph, in
    /// reading order. What a client reading a whole document is given.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for n in self.nodes.iter().filter(|n| !n.text.trim().is_empty()) {
            if n.kind == NodeKind::Structure {
                out.push_str(&"#".repeat((n.depth as usize).clamp(1, 6)));
                out.push(' ');
            }
            out.push_str(n.text.trim());
            out.push_str("\n\n");
        }
        out
    }

    /// Indented outline for `folio tree`: structure nodes show their title,
    /// content nodes the start of their text.
    pub fn render(&self, content_chars: usize) -> String {
        let mut out = String::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let indent = "  ".repeat(n.depth as usize);
            let text = match n.kind {
                NodeKind::Structure => format!("# {}", n.text),
                NodeKind::Content => preview(&n.text, content_chars),
            };
            let place = match n.span.page {
                Some(p) => format!("p{} {}..{}", p, n.span.start, n.span.end),
                None => format!("{}..{}", n.span.start, n.span.end),
            };
            out.push_str(&format!("{indent}{i}: {text}  [{place}]\n"));
        }
        out
    }
}

/// Open headings, innermost last, so that each new heading finds its parent:
/// the nearest open heading of a shallower level (an H3 straight after an H1
/// nests under the H1). Shared by every
/// loader with numbered heading levels.
#[derive(Debug, Default)]
pub struct HeadingStack(Vec<(u32, usize)>);

impl HeadingStack {
    /// The node that content belongs under now.
    pub fn parent(&self) -> usize {
        self.0.last().map_or(ROOT, |&(_, node)| node)
    }

    pub fn push(&mut self, tree: &mut StructureTree, level: u32, title: &str, span: Span) -> usize {
        while self.0.last().is_some_and(|&(open, _)| open >= level) {
            self.0.pop();
        }
        let node = tree.push(self.parent(), NodeKind::Structure, title, span);
        self.0.push((level, node));
        node
    }
}

/// One line of at most `max` characters, with an ellipsis when cut.
pub fn preview(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// The memory a node with `text` holds, as the expansion meter counts it:
/// its text with the allocator's header, and twice its slot, since the
/// node vector grows by doubling.
fn held(text: &str) -> u64 {
    (text.len() + 16 + 2 * std::mem::size_of::<TreeNode>()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_path_and_children_follow_parents() {
        let mut t = StructureTree::new("Doc", Span::default());
        let h = t.push(ROOT, NodeKind::Structure, "Part", Span::bytes(0, 4));
        let p = t.push(h, NodeKind::Content, "body text", Span::bytes(5, 14));
        let h2 = t.push(ROOT, NodeKind::Structure, "Other", Span::bytes(15, 20));
        assert_eq!(t.heading_path(p), vec!["Doc", "Part"]);
        assert_eq!(t.heading_path(h2), vec!["Doc", "Other"]);
        assert_eq!(t.children(ROOT).collect::<Vec<_>>(), vec![h, h2]);
        assert_eq!(t.node(p).depth, 2);
    }

    #[test]
    fn a_grafted_tree_keeps_its_shape_under_its_new_parent() {
        let mut book = StructureTree::new("Book", Span::default());
        let part = book.push(ROOT, NodeKind::Structure, "Part one", Span::default());
        let mut chapter = StructureTree::new("Chapter", Span::bytes(0, 9));
        let h = chapter.push(ROOT, NodeKind::Structure, "Section", Span::bytes(10, 20));
        chapter.push(h, NodeKind::Content, "words", Span::bytes(21, 30));
        let root = book.graft(part, chapter, 3);
        assert_eq!(root, 2);
        let words = book.len() - 1;
        assert_eq!(
            book.heading_path(words),
            vec!["Book", "Part one", "Chapter", "Section"]
        );
        assert_eq!(book.node(words).depth, 4);
        assert_eq!(book.node(words).span, Span::on_page(3, 21, 30));
        assert_eq!(book.children(part).collect::<Vec<_>>(), vec![root]);
    }

    #[test]
    fn preview_cuts_on_characters_not_bytes() {
        assert_eq!(preview("héllo   wörld", 5), "héllo…");
        assert_eq!(preview("a\nb", 10), "a b");
    }
}
