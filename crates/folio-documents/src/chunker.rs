//! Retrieval units from a structure tree: runs of small sibling content nodes
//! are merged, long nodes are split at sentence boundaries, and every chunk
//! keeps its heading path and the nodes it covers, so a hit can be traced back
//! to its place in the document (and RDR2 can light the right tree nodes).
//! A table is never merged with its neighbours, and a long one is split
//! between rows instead, its header repeated in every piece.

use unicode_segmentation::UnicodeSegmentation;

use super::loaders::PdfRect;
use super::structure_tree::{
    node_ordinals, NodeKind, NodeRange, Span, StructureTree, RANGE_JOINER,
};
use super::table::{self, TableRows, TableShape};

/// Sizes in characters. About 4 characters a token, so `target` stays inside
/// the embedding model's 256-token window with the heading path prepended.
#[derive(Debug, Clone, Copy)]
pub struct ChunkSizes {
    pub target: usize,
    pub max: usize,
}

impl Default for ChunkSizes {
    fn default() -> Self {
        ChunkSizes {
            target: 800,
            max: 1200,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChunkPlan {
    pub text: String,
    pub heading_path: String,
    /// Where `text` lives in the tree's nodes: the store keeps these
    /// instead of a second copy of the words.
    pub ranges: Vec<NodeRange>,
    pub span: Span,
    /// Where a PDF chunk is drawn on its page, a box per line; filled in
    /// from the loader's layout by `prepare`, empty for other formats.
    pub boxes: Vec<PdfRect>,
    /// The table rows it holds, when it is (a piece of) one table.
    pub rows: Option<TableRows>,
}

impl ChunkPlan {
    /// What the embedder sees: the heading path gives a paragraph its topic.
    pub fn embedding_input(&self) -> String {
        embedding_input(&self.heading_path, &self.text)
    }

    /// Identity of the embedded text, used to reuse vectors of unchanged chunks.
    pub fn text_hash(&self) -> i64 {
        text_hash(&self.heading_path, &self.text)
    }

    /// The content nodes the chunk covers, in order.
    pub fn node_ordinals(&self) -> Vec<usize> {
        node_ordinals(&self.ranges)
    }
}

pub fn embedding_input(heading_path: &str, text: &str) -> String {
    if heading_path.is_empty() {
        text.to_string()
    } else {
        format!("{heading_path}\n\n{text}")
    }
}

pub fn text_hash(heading_path: &str, text: &str) -> i64 {
    let mut h = blake3::Hasher::new();
    h.update(heading_path.as_bytes());
    h.update(b"\n\n");
    h.update(text.as_bytes());
    let bytes = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    i64::from_le_bytes(first)
}

/// A run of content nodes being merged into one chunk.
struct Pending {
    ranges: Vec<NodeRange>,
    /// Characters of the merged text so far, joiners included.
    chars: usize,
    span: Span,
    parent: Option<usize>,
}

pub fn chunk(tree: &StructureTree, sizes: ChunkSizes) -> Vec<ChunkPlan> {
    let mut out = Vec::new();
    let mut pending: Option<Pending> = None;
    for (id, node) in tree.nodes().iter().enumerate() {
        if node.kind != NodeKind::Content {
            continue;
        }
        let range = NodeRange::trimmed(id, 0, &node.text);
        let text = &node.text[range.start..range.end];
        if text.is_empty() {
            continue;
        }
        let len = text.chars().count();
        // Merging stops at a new parent (another section) or page, so a chunk
        // has one heading path and one unambiguous span, and at a table,
        // which is chunks of its own, so each names its rows.
        let joinable = node.table.is_none()
            && pending.as_ref().is_some_and(|p| {
                p.parent == node.parent
                    && p.span.page == node.span.page
                    && p.chars + RANGE_JOINER.len() + len <= sizes.target
            });
        if !joinable {
            if let Some(p) = pending.take() {
                out.push(finish(tree, p));
            }
        }
        if len > sizes.max || node.table.is_some() {
            let pieces = match node.table {
                Some(shape) if len > sizes.max => table_pieces(text, shape, sizes),
                Some(_) => vec![vec![(0, text.len())]],
                None => split_long(text, sizes)
                    .into_iter()
                    .map(|piece| vec![piece])
                    .collect(),
            };
            for piece in pieces {
                let ranges = piece
                    .into_iter()
                    .map(|(start, end)| NodeRange {
                        node: id,
                        start: range.start + start,
                        end: range.start + end,
                    })
                    .collect();
                out.push(finish(
                    tree,
                    Pending {
                        ranges,
                        chars: 0,
                        span: node.span,
                        parent: node.parent,
                    },
                ));
            }
            continue;
        }
        match pending.as_mut() {
            Some(p) => {
                p.ranges.push(range);
                p.chars += RANGE_JOINER.len() + len;
                p.span.end = node.span.end;
            }
            None => {
                pending = Some(Pending {
                    ranges: vec![range],
                    chars: len,
                    span: node.span,
                    parent: node.parent,
                })
            }
        }
    }
    if let Some(p) = pending {
        out.push(finish(tree, p));
    }
    out
}

fn finish(tree: &StructureTree, p: Pending) -> ChunkPlan {
    let heading_path = p
        .parent
        .map(|parent| tree.heading_label(parent))
        .unwrap_or_default();
    ChunkPlan {
        // The ranges were cut from these nodes' text on character
        // boundaries, so they always read back.
        text: tree.text_of(&p.ranges).unwrap_or_default(),
        heading_path,
        rows: table_rows(tree, &p.ranges),
        ranges: p.ranges,
        span: p.span,
        boxes: Vec::new(),
    }
}

/// The rows of a chunk made of one table alone; a piece of a long table
/// is its header's range, then its rows'.
fn table_rows(tree: &StructureTree, ranges: &[NodeRange]) -> Option<TableRows> {
    let last = ranges.last()?;
    if ranges.iter().any(|r| r.node != last.node) {
        return None;
    }
    let node = tree.nodes().get(last.node)?;
    table::rows_in(&node.text, node.table?, last.start, last.end)
}

/// A table too long for one chunk, in row groups: each piece is the
/// header's lines (a range of their own), then as many whole rows as fit
/// `sizes.target`, so no piece cuts through a row and every piece carries
/// the header. Only a row longer than a chunk on its own is cut, as prose,
/// each part still after the header. A header longer than half a chunk
/// would crowd out the rows, so such a table is split as rows alone.
fn table_pieces(text: &str, shape: TableShape, sizes: ChunkSizes) -> Vec<Vec<(usize, usize)>> {
    let lines: Vec<(usize, usize)> = table::line_ranges(text).collect();
    let header_lines = (shape.header_rows as usize).min(lines.len());
    let header = (header_lines > 0 && header_lines < lines.len())
        .then(|| (0, lines[header_lines - 1].1))
        .filter(|&(start, end)| {
            chars_in(&text[start..end]) + RANGE_JOINER.len() <= sizes.target / 2
        });
    let (rows, budget) = match header {
        Some((start, end)) => (
            &lines[header_lines..],
            sizes.target - chars_in(&text[start..end]) - RANGE_JOINER.len(),
        ),
        None => (&lines[..], sizes.target),
    };
    let with_header = |rows: (usize, usize)| header.into_iter().chain([rows]).collect();
    let mut pieces = Vec::new();
    // The rows being grouped: where they start and end, and their characters.
    let mut group: Option<(usize, usize, usize)> = None;
    for &(start, end) in rows {
        let chars = chars_in(&text[start..end]);
        if let Some((first, last, group_chars)) = group {
            if group_chars + 1 + chars <= budget {
                group = Some((first, end, group_chars + 1 + chars));
                continue;
            }
            pieces.push(with_header((first, last)));
            group = None;
        }
        if chars > budget {
            let row = ChunkSizes {
                target: budget,
                max: budget,
            };
            for (s, e) in split_long(&text[start..end], row) {
                pieces.push(with_header((start + s, start + e)));
            }
        } else {
            group = Some((start, end, chars));
        }
    }
    if let Some((first, last, _)) = group {
        pieces.push(with_header((first, last)));
    }
    pieces
}

fn chars_in(text: &str) -> usize {
    text.chars().count()
}

/// Byte ranges of `text`, pieces of at most `sizes.target` characters with
/// no surrounding whitespace, cut between sentences, and between words only
/// when one sentence alone is too long. A word longer than a piece (a URL,
/// a base64 blob, Thai or Lao, which put no spaces between words) is cut
/// between grapheme clusters, and a cluster that long between characters,
/// so no piece ever exceeds the embedding window.
fn split_long(text: &str, sizes: ChunkSizes) -> Vec<(usize, usize)> {
    let mut pieces = Pieces {
        text,
        target: sizes.target,
        done: Vec::new(),
        cur: (0, 0),
        cur_len: 0,
    };
    pieces.add(
        0,
        text,
        &[Cut::Sentences, Cut::Words, Cut::Graphemes, Cut::Chars],
    );
    pieces.finish()
}

/// Ways to cut text, coarsest first.
#[derive(Clone, Copy)]
enum Cut {
    Sentences,
    Words,
    Graphemes,
    Chars,
}

impl Cut {
    /// The parts of `text` with their byte offsets in it.
    fn parts(self, text: &str) -> Vec<(usize, &str)> {
        match self {
            Cut::Sentences => text.split_sentence_bound_indices().collect(),
            Cut::Words => text.split_word_bound_indices().collect(),
            Cut::Graphemes => text.grapheme_indices(true).collect(),
            Cut::Chars => text
                .char_indices()
                .map(|(i, c)| (i, &text[i..i + c.len_utf8()]))
                .collect(),
        }
    }
}

/// Pieces of `text` being filled in order, each up to `target` characters;
/// the parts arrive in order, so the current piece is one byte range.
struct Pieces<'a> {
    text: &'a str,
    target: usize,
    done: Vec<(usize, usize)>,
    cur: (usize, usize),
    cur_len: usize,
}

impl Pieces<'_> {
    /// Adds `part`, found `offset` bytes into the text, to the current
    /// piece, or starts a new one when it does not fit; a part too long for
    /// any piece is cut with the first of `cuts` and its parts added with
    /// the finer ones.
    fn add(&mut self, offset: usize, part: &str, cuts: &[Cut]) {
        let len = part.chars().count();
        if self.cur_len + len > self.target && self.cur_len > 0 {
            self.close();
        }
        match cuts.split_first() {
            Some((cut, finer)) if len > self.target => {
                for (at, sub) in cut.parts(part) {
                    self.add(offset + at, sub, finer);
                }
            }
            _ => {
                if self.cur_len == 0 {
                    self.cur.0 = offset;
                }
                self.cur.1 = offset + part.len();
                self.cur_len += len;
            }
        }
    }

    /// Ends the current piece, its surrounding whitespace left out.
    fn close(&mut self) {
        let (start, end) = self.cur;
        let r = NodeRange::trimmed(0, start, &self.text[start..end]);
        if r.start < r.end {
            self.done.push((r.start, r.end));
        }
        self.cur_len = 0;
    }

    fn finish(mut self) -> Vec<(usize, usize)> {
        if self.cur_len > 0 {
            self.close();
        }
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure_tree::ROOT;

    fn tree_with(paragraphs: &[&str]) -> StructureTree {
        let mut t = StructureTree::new("Doc", Span::default());
        let h = t.push(ROOT, NodeKind::Structure, "Section", Span::bytes(0, 9));
        for (i, p) in paragraphs.iter().enumerate() {
            t.push(
                h,
                NodeKind::Content,
                *p,
                Span::bytes(10 + i * 100, 10 + i * 100 + p.len()),
            );
        }
        t
    }

    #[test]
    fn small_siblings_merge_and_keep_their_nodes() {
        let t = tree_with(&["one short paragraph.", "another short one.", "third."]);
        let chunks = chunk(&t, ChunkSizes::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].node_ordinals(), vec![2, 3, 4]);
        assert_eq!(chunks[0].heading_path, "Doc > Section");
        assert_eq!(chunks[0].span.start, 10);
        assert!(chunks[0].text.contains("another short one."));
    }

    #[test]
    fn long_nodes_split_at_sentences_within_limits() {
        let sentence = "This sentence is about forty characters. ";
        let long = sentence.repeat(60);
        let t = tree_with(&[&long]);
        let sizes = ChunkSizes {
            target: 200,
            max: 300,
        };
        let chunks = chunk(&t, sizes);
        assert!(chunks.len() >= 10, "got {} chunks", chunks.len());
        for c in &chunks {
            assert!(c.text.chars().count() <= sizes.target, "{}", c.text.len());
            assert!(c.text.ends_with('.'), "cut mid-sentence: {:?}", c.text);
            assert_eq!(c.node_ordinals(), vec![2]);
        }
        let rejoined: String = chunks
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            rejoined.split_whitespace().count(),
            long.split_whitespace().count()
        );
    }

    #[test]
    fn a_sentence_longer_than_target_is_cut_between_words() {
        let t = tree_with(&[&"word ".repeat(400)]);
        let chunks = chunk(
            &t,
            ChunkSizes {
                target: 100,
                max: 150,
            },
        );
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 100));
        assert!(chunks
            .iter()
            .all(|c| c.text.split(' ').all(|w| w == "word")));
    }

    #[test]
    fn a_word_longer_than_target_is_cut_between_graphemes() {
        let thai = "ภาษาไทยไม่เว้นวรรคระหว่างคำ".repeat(10);
        let url = format!("https://example.org/{}", "a".repeat(300));
        let zalgo = format!("e{}", "\u{301}".repeat(150));
        let sizes = ChunkSizes {
            target: 40,
            max: 60,
        };
        for word in [thai, url, zalgo] {
            let chunks = chunk(&tree_with(&[&word]), sizes);
            assert!(chunks.len() > 1);
            assert!(chunks.iter().all(|c| c.text.chars().count() <= 40));
            let rejoined: String = chunks.iter().map(|c| c.text.as_str()).collect();
            assert_eq!(rejoined, word);
        }
    }

    #[test]
    fn chunks_never_span_two_sections_or_pages() {
        let mut t = StructureTree::new("Doc", Span::default());
        let a = t.push(ROOT, NodeKind::Structure, "A", Span::default());
        t.push(a, NodeKind::Content, "under a", Span::on_page(1, 0, 7));
        t.push(
            a,
            NodeKind::Content,
            "also a, next page",
            Span::on_page(2, 0, 17),
        );
        let b = t.push(ROOT, NodeKind::Structure, "B", Span::default());
        t.push(b, NodeKind::Content, "under b", Span::on_page(2, 18, 25));
        let chunks = chunk(&t, ChunkSizes::default());
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[2].heading_path, "Doc > B");
    }

    #[test]
    fn text_hash_depends_on_heading_path() {
        assert_ne!(text_hash("A", "same"), text_hash("B", "same"));
        assert_eq!(text_hash("A", "same"), text_hash("A", "same"));
    }

    /// Stored with every chunk and matched to reuse vectors: another value
    /// for the same text would re-embed every library on its next pass.
    /// The value is one an index written by an earlier Folio holds.
    #[test]
    fn text_hash_is_the_one_indexes_hold() {
        assert_eq!(
            text_hash(
                "Introduction > Source Code",
                "The source files from which this book is generated can be found on GitHub."
            ),
            -4630730658521641851
        );
    }

    #[test]
    fn a_long_table_splits_between_rows_with_its_header_in_every_piece() {
        let mut text = String::from("Crate | Version | Purpose");
        for i in 0..400 {
            text.push_str(&format!(
                "\ncrate{i} | {i}.0.{} | does thing number {i}",
                i % 7
            ));
        }
        let mut t = StructureTree::new("Doc", Span::default());
        let table = t.push_table(ROOT, text.clone(), TableShape::headed(1), Span::bytes(0, 9));
        let chunks = chunk(&t, ChunkSizes::default());
        assert!(chunks.len() > 10, "got {} chunks", chunks.len());
        let mut rows_seen = 0;
        for c in &chunks {
            assert_eq!(c.ranges.len(), 2);
            assert!(c.ranges.iter().all(|r| r.node == table));
            let (header, rows) = c.text.split_once(RANGE_JOINER).unwrap();
            assert_eq!(header, "Crate | Version | Purpose");
            assert!(c.text.chars().count() <= ChunkSizes::default().target);
            for row in rows.lines() {
                assert!(text.lines().any(|line| line == row), "a cut row: {row:?}");
                rows_seen += 1;
            }
        }
        assert_eq!(rows_seen, 400);
        assert_eq!(chunks[0].rows.map(|r| r.first), Some(1));
        let last = chunks.last().unwrap().rows.unwrap();
        assert_eq!(last.last, 400);
        assert!(chunks
            .windows(2)
            .all(|w| w[0].rows.unwrap().last + 1 == w[1].rows.unwrap().first));
    }

    #[test]
    fn a_table_row_longer_than_a_chunk_is_cut_and_each_part_keeps_the_header() {
        let long_row = format!("big | {}", "word ".repeat(400));
        let text = format!("H1 | H2\nsmall | row\n{}\nlast | row", long_row.trim());
        let mut t = StructureTree::new("Doc", Span::default());
        t.push_table(ROOT, text, TableShape::headed(1), Span::bytes(0, 9));
        let chunks = chunk(&t, ChunkSizes::default());
        assert!(chunks.len() >= 4);
        assert!(chunks.iter().all(|c| c.text.starts_with("H1 | H2\n\n")));
        assert!(chunks[0].text.ends_with("small | row"));
        assert!(chunks.last().unwrap().text.ends_with("last | row"));
    }
}
