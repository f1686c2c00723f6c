//! Markdown: headings become structure nodes nested by level, and every
//! top-level block (paragraph, whole list, table, code block, block quote,
//! HTML block, footnote) one content node under the heading before it, with
//! the block's source byte range as its span. A leading H1 names the document.
//! A table is a table node (`crate::table`) of its own, also when it sits
//! inside a list or a quote: the block's text before it and after it are
//! then content nodes on either side.
//!
//! Notes vaults are read as notes apps read them (`vault.rs`): YAML front
//! matter is metadata (title, aliases, tags), never text, and one that
//! cannot be read is noted and skipped alone; inline `#tags` are tags;
//! `[[wikilinks]]` and `![[embeds]]` are links from the node they are
//! written in, their label kept as text and an embed's target never
//! copied in. A callout (`> [!note] Title`) is a block quote, so a
//! content node of its own.

use std::collections::HashSet;
use std::fmt::Write;
use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};

use super::vault::{front_matter, inline_tags, link_target, FrontMatterError, LinkTarget};
use super::Parsed;
use crate::notes::{NoteFacts, NoteLink};
use crate::structure_tree::{HeadingStack, NodeKind, Span, StructureTree, ROOT};
use crate::table::{CellSpan, TableText};

/// The pulldown-cmark extensions Folio reads markdown with (the tree
/// benchmark parses with the same ones for its baseline). Front matter is
/// enabled so it is not read as a rule and a setext heading.
pub const MARKDOWN_OPTIONS: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_FOOTNOTES)
    .union(Options::ENABLE_YAML_STYLE_METADATA_BLOCKS)
    .union(Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS)
    .union(Options::ENABLE_WIKILINKS);

pub(super) fn parse(text: &str, fallback_title: &str) -> Parsed {
    let mut builder = Builder::new(fallback_title);
    for (event, range) in Parser::new_ext(text, MARKDOWN_OPTIONS).into_offset_iter() {
        builder.event(event, range);
    }
    let note = builder.front_matter_error.map(|e| {
        format!("{e}; its title, aliases and tags were not read, the rest of the note was")
    });
    Parsed {
        tree: builder.tree,
        facts: builder.facts,
        note,
        ocr_pages: Vec::new(),
        layout: Vec::new(),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Heading(u8),
    Content,
    /// Front matter: parsed so it is not mistaken for content, then dropped.
    Skip,
}

/// Walks the event stream once, collecting the text of the current top-level
/// block into one reused buffer.
/// The deepest list nesting that still indents further.
const MAX_INDENT_LEVELS: usize = 8;

struct Builder {
    tree: StructureTree,
    headings: HeadingStack,
    /// Whether any block has been kept yet; a leading H1 is the title only
    /// when nothing came before it.
    seen_block: bool,
    /// Tags open inside the current top-level block (0: between blocks).
    depth: u32,
    kind: BlockKind,
    span: Span,
    text: String,
    /// A nested block ended (or began after text): the next text starts a
    /// new line. Deferred so that trailing block ends add no blank lines.
    pending_break: bool,
    line_has_text: bool,
    /// Open lists, innermost last: the next item number, or None if bulleted.
    lists: Vec<Option<u64>>,
    /// Inside a code block: no `#tags` there.
    in_code: bool,
    /// Links open around the text: a link's label (`[[#Heading]]`'s
    /// `#Heading`) is no tag either.
    in_links: u32,
    /// The YAML of the front matter block being read.
    front_matter: String,
    front_matter_error: Option<FrontMatterError>,
    facts: NoteFacts,
    tags_seen: HashSet<String>,
    /// The links of the block being read, and whether each is an embed.
    block_links: Vec<(LinkTarget, bool)>,
    /// The table being read, if any.
    table: Option<TableBuild>,
}

/// A table being read: its rows so far, the cell being read, and its
/// source bytes.
struct TableBuild {
    rows: TableText,
    cell: String,
    span: Span,
}

impl Builder {
    fn new(fallback_title: &str) -> Self {
        Builder {
            tree: StructureTree::new(fallback_title, Span::bytes(0, 0)),
            headings: HeadingStack::default(),
            seen_block: false,
            depth: 0,
            kind: BlockKind::Content,
            span: Span::default(),
            text: String::new(),
            pending_break: false,
            line_has_text: false,
            lists: Vec::new(),
            in_code: false,
            in_links: 0,
            front_matter: String::new(),
            front_matter_error: None,
            facts: NoteFacts::default(),
            tags_seen: HashSet::new(),
            block_links: Vec::new(),
            table: None,
        }
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag),
            Event::Text(s) if self.kind == BlockKind::Skip => self.front_matter.push_str(&s),
            Event::Text(s) => {
                if !self.in_code && self.in_links == 0 {
                    self.read_tags(&s);
                }
                self.push_text(&s);
            }
            Event::Code(s) | Event::Html(s) => self.push_text(&s),
            Event::SoftBreak => self.push_text(" "),
            Event::HardBreak if self.table.is_some() => self.push_text(" "),
            Event::HardBreak => {
                self.text.push('\n');
                self.line_has_text = false;
            }
            // Inline HTML is markup around text that arrives as Text events;
            // references and rules carry no text of their own.
            Event::InlineHtml(_)
            | Event::FootnoteReference(_)
            | Event::Rule
            | Event::TaskListMarker(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_) => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        if self.depth == 0 {
            self.kind = match &tag {
                Tag::Heading { level, .. } => BlockKind::Heading(*level as u8),
                Tag::MetadataBlock(_) => BlockKind::Skip,
                _ => BlockKind::Content,
            };
            self.span = Span::bytes(range.start, range.end);
            self.text.clear();
            self.pending_break = false;
            self.line_has_text = false;
            self.lists.clear();
            self.block_links.clear();
            self.front_matter.clear();
        } else if is_block(&tag) && self.line_has_text {
            self.pending_break = true;
        }
        self.depth += 1;
        match tag {
            Tag::List(first) => self.lists.push(first),
            Tag::Item => self.start_item(),
            Tag::Table(_) => self.open_table(range),
            Tag::CodeBlock(_) => self.in_code = true,
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => self.open_link(link_type, &dest_url, false),
            Tag::Image {
                link_type,
                dest_url,
                ..
            } => self.open_link(link_type, &dest_url, true),
            _ => {}
        }
    }

    /// A table inside a block ends the block's text so far, which becomes
    /// a node of its own; the block goes on after the table.
    fn open_table(&mut self, range: Range<usize>) {
        if self.depth > 1 {
            self.push_block_text(Span::bytes(self.span.start, range.start));
        }
        self.table = Some(TableBuild {
            rows: TableText::new(),
            cell: String::new(),
            span: Span::bytes(range.start, range.end),
        });
    }

    fn close_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        if let Some((text, shape)) = table.rows.finish() {
            let node = self
                .tree
                .push_table(self.headings.parent(), text, shape, table.span);
            self.seen_block = true;
            self.keep_links(node);
        }
        self.span.start = table.span.end;
        self.text.clear();
        self.pending_break = false;
        self.line_has_text = false;
    }

    /// The text inside a link is its label, never a tag; a wikilink (an
    /// embed, when `embed`) is one of the note's links.
    fn open_link(&mut self, link_type: LinkType, dest: &str, embed: bool) {
        self.in_links += 1;
        if matches!(link_type, LinkType::WikiLink { .. }) {
            self.block_links.push((link_target(dest), embed));
        }
    }

    fn start_item(&mut self) {
        if !self.text.is_empty() {
            self.trim_line_end();
            self.text.push('\n');
        }
        self.indent(self.lists.len().saturating_sub(1));
        match self.lists.last_mut() {
            Some(Some(n)) => {
                // Writing to a String cannot fail.
                let _ = write!(self.text, "{n}. ");
                *n += 1;
            }
            _ => self.text.push_str("- "),
        }
        self.pending_break = false;
        self.line_has_text = false;
    }

    fn end(&mut self, tag: TagEnd) {
        self.depth = self.depth.saturating_sub(1);
        match tag {
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Link | TagEnd::Image => self.in_links = self.in_links.saturating_sub(1),
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    table.rows.cell(&table.cell, CellSpan::default());
                    table.cell.clear();
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.end_row(tag == TagEnd::TableHead);
                }
            }
            TagEnd::Table => self.close_table(),
            TagEnd::CodeBlock => {
                self.in_code = false;
                let kept = self.text.trim_end_matches('\n').len();
                self.text.truncate(kept);
            }
            _ => {}
        }
        if self.depth > 0 {
            if is_block_end(tag) && self.line_has_text {
                self.pending_break = true;
            }
            return;
        }
        self.finish_block();
    }

    fn push_text(&mut self, s: &str) {
        if s.is_empty() || self.kind == BlockKind::Skip {
            return;
        }
        if let Some(table) = &mut self.table {
            table.cell.push_str(s);
            return;
        }
        if self.pending_break {
            self.trim_line_end();
            self.text.push('\n');
            self.indent(self.lists.len());
            self.pending_break = false;
        }
        self.text.push_str(s);
        self.line_has_text = true;
    }

    /// Indentation shows a reader the nesting; past a few levels it only
    /// multiplies bytes: a list nested 10,000 deep, 20 KB of markdown,
    /// would otherwise become 100 MB of spaces.
    fn indent(&mut self, levels: usize) {
        for _ in 0..levels.min(MAX_INDENT_LEVELS) {
            self.text.push_str("  ");
        }
    }

    fn trim_line_end(&mut self) {
        let kept = self.text.trim_end_matches(' ').len();
        self.text.truncate(kept);
    }

    fn finish_block(&mut self) {
        if self.kind == BlockKind::Skip {
            self.read_front_matter();
            return;
        }
        self.push_block_text(self.span);
    }

    /// Makes the block's text so far a node spanning `span`, with the
    /// links read in it.
    fn push_block_text(&mut self, span: Span) {
        let text = self.text.trim();
        let node = if text.is_empty() || is_html_comment(text) {
            self.headings.parent()
        } else {
            let node = match self.kind {
                BlockKind::Heading(1) if !self.seen_block => {
                    self.tree.set_title(text, span);
                    ROOT
                }
                BlockKind::Heading(level) => {
                    self.headings
                        .push(&mut self.tree, u32::from(level), text, span)
                }
                _ => self
                    .tree
                    .push(self.headings.parent(), NodeKind::Content, text, span),
            };
            self.seen_block = true;
            node
        };
        self.keep_links(node);
    }

    /// The links read since the last node was made are links from `node`.
    fn keep_links(&mut self, node: usize) {
        for (target, embed) in self.block_links.drain(..) {
            self.facts.links.push(NoteLink {
                node,
                target,
                embed,
            });
        }
    }

    /// The front matter's title names the note until a leading H1 does;
    /// its aliases and tags join the note's. One that cannot be read is
    /// noted and skipped, and nothing else of the note is lost.
    fn read_front_matter(&mut self) {
        match front_matter(&self.front_matter) {
            Ok(read) => {
                if let Some(title) = read.title.filter(|t| !t.trim().is_empty()) {
                    self.tree.set_title(title.trim(), self.span);
                }
                self.facts.aliases.extend(read.aliases);
                for tag in read.tags {
                    self.add_tag(tag);
                }
            }
            // Its lines counted in the file, below the opening `---`.
            Err(FrontMatterError::Malformed { line, message }) => {
                self.front_matter_error = Some(FrontMatterError::Malformed {
                    line: line + 1,
                    message,
                })
            }
            Err(e) => self.front_matter_error = Some(e),
        }
        self.front_matter.clear();
    }

    fn read_tags(&mut self, text: &str) {
        let mut found = Vec::new();
        inline_tags(text, &mut found);
        for tag in found {
            self.add_tag(tag);
        }
    }

    fn add_tag(&mut self, tag: String) {
        if self.tags_seen.insert(tag.clone()) {
            self.facts.tags.push(tag);
        }
    }
}

/// Tags whose content starts on its own line when nested in another block.
fn is_block(tag: &Tag<'_>) -> bool {
    matches!(
        tag,
        Tag::Paragraph
            | Tag::Heading { .. }
            | Tag::BlockQuote(_)
            | Tag::CodeBlock(_)
            | Tag::HtmlBlock
            | Tag::List(_)
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Table(_)
            | Tag::TableHead
            | Tag::TableRow
    )
}

fn is_block_end(tag: TagEnd) -> bool {
    matches!(
        tag,
        TagEnd::Paragraph
            | TagEnd::Heading(_)
            | TagEnd::BlockQuote(_)
            | TagEnd::CodeBlock
            | TagEnd::HtmlBlock
            | TagEnd::List(_)
            | TagEnd::Item
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Table
            | TagEnd::TableHead
            | TagEnd::TableRow
    )
}

/// A block that is nothing but one HTML comment (licence headers, editor
/// markers) carries nothing worth retrieving.
fn is_html_comment(text: &str) -> bool {
    text.starts_with("<!--") && text.find("-->") == Some(text.len() - 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure_tree::TreeNode;
    use crate::table::TableShape;

    fn tree_of(text: &str, fallback_title: &str) -> StructureTree {
        parse(text, fallback_title).tree
    }

    fn outline(tree: &StructureTree) -> Vec<(u32, NodeKind, &str)> {
        tree.nodes()
            .iter()
            .map(|n| (n.depth, n.kind, n.text.as_str()))
            .collect()
    }

    fn first_word(n: &TreeNode) -> &str {
        n.text
            .split(|c: char| !c.is_alphanumeric())
            .find(|w| !w.is_empty())
            .unwrap_or("")
    }

    #[test]
    fn leading_h1_is_the_title_and_headings_nest_by_level() {
        let src = "# Guide\n\nIntro text.\n\n## Install\n\nRun it.\n\n### Linux\n\napt.\n\n## Use\n\nCall it.\n";
        let tree = tree_of(src, "guide");
        use NodeKind::*;
        assert_eq!(
            outline(&tree),
            vec![
                (0, Structure, "Guide"),
                (1, Content, "Intro text."),
                (1, Structure, "Install"),
                (2, Content, "Run it."),
                (2, Structure, "Linux"),
                (3, Content, "apt."),
                (1, Structure, "Use"),
                (2, Content, "Call it."),
            ]
        );
        assert_eq!(tree.node(0).span, Span::bytes(0, 8));
        assert_eq!(tree.heading_path(5), vec!["Guide", "Install", "Linux"]);
    }

    #[test]
    fn skipped_levels_nest_under_the_nearest_shallower_heading() {
        let src = "# A\n\n### deep\n\ntext\n\n## mid\n\nmore\n\n# B\n\nlast\n";
        let tree = tree_of(src, "f");
        use NodeKind::*;
        assert_eq!(
            outline(&tree),
            vec![
                (0, Structure, "A"),
                (1, Structure, "deep"),
                (2, Content, "text"),
                (1, Structure, "mid"),
                (2, Content, "more"),
                (1, Structure, "B"),
                (2, Content, "last"),
            ]
        );
    }

    #[test]
    fn h1_after_content_is_a_heading_and_the_title_falls_back() {
        let src = "Preface first.\n\n# Chapter\n\nBody.\n";
        let tree = tree_of(src, "book");
        assert_eq!(tree.title(), "book");
        assert_eq!(tree.node(0).span, Span::bytes(0, 0));
        use NodeKind::*;
        assert_eq!(
            outline(&tree),
            vec![
                (0, Structure, "book"),
                (1, Content, "Preface first."),
                (1, Structure, "Chapter"),
                (2, Content, "Body.")
            ]
        );
    }

    #[test]
    fn h2_first_does_not_become_the_title() {
        let tree = tree_of("## Sub\n\n# Main\n", "f");
        assert_eq!(tree.title(), "f");
        assert_eq!(
            outline(&tree)[1..],
            [
                (1, NodeKind::Structure, "Sub"),
                (1, NodeKind::Structure, "Main")
            ]
        );
    }

    #[test]
    fn spans_cover_the_block_source() {
        let src =
            "# T\n\nSome *emphasised* [link](http://x.org) text\nwrapped.\n\n## H\n\n```rust\nfn main() {}\n```\n";
        let tree = tree_of(src, "f");
        for n in &tree.nodes()[1..] {
            let source = &src[n.span.start..n.span.end];
            assert!(
                source.contains(first_word(n)),
                "{:?} not in {:?}",
                n.text,
                source
            );
        }
        assert_eq!(tree.node(1).text, "Some emphasised link text wrapped.");
        assert_eq!(tree.node(3).text, "fn main() {}");
    }

    #[test]
    fn lists_are_one_node_with_nested_items_indented() {
        let src = "- one\n- two\n  - two a\n  - two b\n- three\n\n1. first\n2. second\n";
        let tree = tree_of(src, "f");
        assert_eq!(tree.len(), 3);
        assert_eq!(
            tree.node(1).text,
            "- one\n- two\n  - two a\n  - two b\n- three"
        );
        assert_eq!(tree.node(2).text, "1. first\n2. second");
    }

    #[test]
    fn deep_nesting_indents_only_so_far() {
        let depth = 10_000;
        let tree = tree_of(&format!("{}bottom\n", "- ".repeat(depth)), "f");
        let text = &tree.node(1).text;
        assert!(text.ends_with("- bottom"), "{}", &text[text.len() - 40..]);
        let deepest = "  ".repeat(MAX_INDENT_LEVELS);
        assert!(text.lines().all(|l| !l.starts_with(&format!("{deepest} "))));
        assert!(text.len() < 20 * depth, "{} bytes", text.len());
    }

    #[test]
    fn loose_list_items_keep_their_paragraphs_apart() {
        let src = "- para one\n\n  para two\n\n- next item\n";
        let tree = tree_of(src, "f");
        assert_eq!(tree.node(1).text, "- para one\n  para two\n- next item");
    }

    #[test]
    fn tables_render_rows_as_lines() {
        let src = "| a | b |\n|---|---|\n| 1 | 2 |\n| x | `y` \\| z |\n";
        let tree = tree_of(src, "f");
        assert_eq!(tree.node(1).text, "a | b\n1 | 2\nx | y \\| z");
        assert_eq!(tree.node(1).table, Some(TableShape::headed(1)));
        assert_eq!(tree.node(1).span, Span::bytes(0, src.len()));
    }

    #[test]
    fn a_table_inside_a_list_is_a_node_of_its_own_between_the_items() {
        let src = "- first item\n- has a table:\n\n  | k | v |\n  |---|---|\n  | a | [[Note]] |\n\n- last item\n";
        let parsed = parse(src, "f");
        let tree = &parsed.tree;
        let texts: Vec<&str> = tree.nodes()[1..].iter().map(|n| n.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "- first item\n- has a table:",
                "k | v\na | Note",
                "- last item"
            ]
        );
        assert_eq!(tree.node(2).table, Some(TableShape::headed(1)));
        assert_eq!(tree.node(1).table, None);
        let table_at = src.find("| k").unwrap();
        assert_eq!(tree.node(1).span, Span::bytes(0, table_at));
        assert_eq!(tree.node(2).span.start, table_at);
        assert_eq!(tree.node(3).span.end, src.len());
        // A link in a cell is a link from the table's node.
        assert_eq!(parsed.facts.links.len(), 1);
        assert_eq!(parsed.facts.links[0].node, 2);
    }

    #[test]
    fn a_table_of_5000_rows_is_chunked_between_rows_with_its_header() {
        use crate::chunker::{chunk, ChunkSizes};
        let mut src = String::from("# Parts\n\n| Part | Stock | Bin |\n|---|---|---|\n");
        for i in 0..5000 {
            src.push_str(&format!("| part-{i} | {} | bin {} |\n", i * 3, i % 40));
        }
        let tree = tree_of(&src, "f");
        assert_eq!(tree.len(), 2);
        let table = tree.node(1);
        assert_eq!(table.text.lines().count(), 5001);
        let rows: HashSet<&str> = table.text.lines().skip(1).collect();
        let chunks = chunk(&tree, ChunkSizes::default());
        assert!(chunks.len() > 100);
        let mut seen = 0;
        for c in &chunks {
            let (header, body) = c.text.split_once("\n\n").expect("a header");
            assert_eq!(header, "Part | Stock | Bin");
            for line in body.lines() {
                assert!(rows.contains(line), "a cut row: {line:?}");
                seen += 1;
            }
        }
        assert_eq!(seen, 5000);
    }

    #[test]
    fn quotes_html_and_breaks() {
        let src =
            "> quoted\n> line\n>\n> second para\n\n<div>\n  raw html\n</div>\n\nhard  \nbreak\n\n<!-- a comment -->\n";
        let tree = tree_of(src, "f");
        let texts: Vec<&str> = tree.nodes()[1..].iter().map(|n| n.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "quoted line\nsecond para",
                "<div>\n  raw html\n</div>",
                "hard\nbreak"
            ]
        );
    }

    #[test]
    fn front_matter_is_skipped_and_does_not_block_the_title() {
        let src = "---\ntitle: x\nlayout: post\n---\n# Real Title\n\nBody\n";
        let tree = tree_of(src, "f");
        assert_eq!(tree.title(), "Real Title");
        assert_eq!(tree.len(), 2);
    }

    #[test]
    fn a_notes_front_matter_tags_and_links_are_facts_not_text() {
        let src = "---\ntitle: Front title\naliases: [Alt]\ntags: [a/b]\n---\nIntro #inline and [[Other#Part|label]] with ![[Pic]].\n\n## Section\n\nSee [[#Section]].\n\n```\n#not-a-tag [[not a link]]\n```\n\n> [!note] A callout\n> with #callout-tag\n";
        let parsed = parse(src, "f");
        let tree = &parsed.tree;
        assert_eq!(tree.title(), "Front title");
        assert_eq!(tree.node(1).text, "Intro #inline and label with Pic.");
        assert_eq!(tree.node(3).text, "See #Section.");
        assert_eq!(tree.node(4).text, "#not-a-tag [[not a link]]");
        assert_eq!(tree.node(5).kind, NodeKind::Content);
        assert!(tree.node(5).text.contains("A callout"));
        let facts = &parsed.facts;
        assert_eq!(facts.aliases, ["Alt"]);
        assert_eq!(facts.tags, ["a/b", "inline", "callout-tag"]);
        let links: Vec<(usize, &str, Vec<&str>, bool)> = facts
            .links
            .iter()
            .map(|l| {
                let headings = l.target.headings.iter().map(String::as_str).collect();
                (l.node, l.target.note.as_str(), headings, l.embed)
            })
            .collect();
        assert_eq!(
            links,
            [
                (1, "Other", vec!["Part"], false),
                (1, "Pic", vec![], true),
                (3, "", vec!["Section"], false),
            ]
        );
        assert!(parsed.note.is_none());
    }

    #[test]
    fn front_matter_that_cannot_be_read_is_noted_and_costs_only_itself() {
        let src = "---\ntitle: x\nnot a key\n---\n# Kept\n\nBody #tag\n";
        let parsed = parse(src, "f");
        assert_eq!(parsed.tree.title(), "Kept");
        assert_eq!(parsed.tree.node(1).text, "Body #tag");
        assert_eq!(parsed.facts.tags, ["tag"]);
        let note = parsed.note.unwrap();
        assert!(note.starts_with("front matter line 3"), "{note}");
    }

    #[test]
    fn empty_blocks_and_documents() {
        assert_eq!(tree_of("", "f").len(), 1);
        let tree = tree_of("#\n\n   \n\n---\n", "f");
        assert_eq!(tree.len(), 1);
        assert_eq!(tree.title(), "f");
    }

    #[test]
    fn never_panics_on_odd_input() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet = [
            "#", "# ", "\n", "- ", "1. ", "|", "---", "```", "> ", "<div>", "*", "[", "]", "(",
            ")", "a", " ", "\t", "é", "[^1]", ": ",
        ];
        for _ in 0..300 {
            let mut s = String::new();
            for _ in 0..60 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let tree = tree_of(&s, "f");
            for n in tree.nodes() {
                assert!(n.span.start <= n.span.end && n.span.end <= s.len());
            }
        }
    }
}
