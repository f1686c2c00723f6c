//! The summaries a whole-document answer needs, planned from the
//! document's structure tree before any model call (pure: no model, no
//! database). Every heading is a section; a section's summary is written
//! from its own paragraphs and its subsections' summaries, so sections are
//! listed children first. Own text longer than a piece is cut into pieces
//! that are summarised one by one and then reduced, map-reduce style.
//!
//! Each piece and section has a key: a hash of its text, its subsections'
//! keys, and what writes the summary (model and prompt). A summary is
//! cached under its key, so an unchanged section is never summarised
//! twice, and an edit re-summarises only the sections it touched and the
//! sections above them.

use folio_documents::structure_tree::{NodeKind, Span, StructureTree, ROOT};

/// Own text of a section up to this many characters is summarised in the
/// section's call; more is cut into pieces of at most this size.
pub const PIECE_CHARS: usize = 3_000;

#[derive(Debug, Clone, PartialEq)]
pub struct DocumentSection {
    /// The heading's node in the tree (the root for the document itself).
    pub node: usize,
    pub depth: u32,
    /// Headings from the document title down, joined with " › ".
    pub heading_path: String,
    /// From the heading to the end of its last descendant.
    pub span: Span,
    /// Every node of the section's subtree, the heading's included.
    pub nodes: Vec<usize>,
    /// The section's own paragraphs: one piece when they fit, else several.
    pub pieces: Vec<Piece>,
    /// Subsections, as indices into [`Plan::sections`] (all earlier).
    pub children: Vec<usize>,
    pub key: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub text: String,
    pub key: String,
}

impl DocumentSection {
    /// Whether the own text is summarised in calls of its own first.
    pub fn is_split(&self) -> bool {
        self.pieces.len() > 1
    }
}

/// Every section of a document, children before parents; the last is the
/// document itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub sections: Vec<DocumentSection>,
}

impl Plan {
    /// `writer` names what writes the summaries (model and prompt), so a
    /// summary by another model or prompt is never taken from the cache.
    pub fn of(tree: &StructureTree, writer: &str) -> Plan {
        let mut sections = Vec::new();
        plan_section(tree, ROOT, writer, &mut sections);
        Plan { sections }
    }

    /// Sections in reading order (a heading before what it holds).
    pub fn reading_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.sections.len()).collect();
        order.sort_by_key(|&i| self.sections[i].node);
        order
    }

    /// Model calls needed for the summaries whose keys `cached` lacks.
    pub fn calls_needed(&self, cached: &dyn Fn(&str) -> bool) -> usize {
        self.sections
            .iter()
            .filter(|s| !cached(&s.key))
            .map(|s| {
                1 + if s.is_split() {
                    s.pieces.iter().filter(|p| !cached(&p.key)).count()
                } else {
                    0
                }
            })
            .sum()
    }
}

/// Plans `node`'s subsections, then `node`; returns its index.
fn plan_section(
    tree: &StructureTree,
    node: usize,
    writer: &str,
    sections: &mut Vec<DocumentSection>,
) -> usize {
    let mut children = Vec::new();
    let mut own = Vec::new();
    for child in tree.children(node) {
        match tree.node(child).kind {
            NodeKind::Structure => children.push(plan_section(tree, child, writer, sections)),
            NodeKind::Content => own.push(tree.node(child).text.as_str()),
        }
    }
    let pieces: Vec<Piece> = cut(&own.join("\n\n"))
        .into_iter()
        .map(|text| Piece {
            key: key(&["piece", writer, &text]),
            text,
        })
        .collect();
    let heading = &tree.node(node).text;
    let mut parts: Vec<&str> = vec!["section", writer, heading];
    parts.extend(pieces.iter().map(|p| p.key.as_str()));
    parts.extend(children.iter().map(|&c| sections[c].key.as_str()));
    let key = key(&parts);
    let nodes = subtree(tree, node);
    let span = Span {
        end: nodes
            .iter()
            .map(|&n| tree.node(n).span.end)
            .max()
            .unwrap_or_default(),
        ..tree.node(node).span
    };
    sections.push(DocumentSection {
        node,
        depth: tree.node(node).depth,
        heading_path: tree.heading_path(node).join(" › "),
        span,
        nodes,
        pieces,
        children,
        key,
    });
    sections.len() - 1
}

fn subtree(tree: &StructureTree, node: usize) -> Vec<usize> {
    let mut all = vec![node];
    let mut i = 0;
    while i < all.len() {
        all.extend(tree.children(all[i]));
        i += 1;
    }
    all.sort_unstable();
    all
}

/// `text` in pieces of at most [`PIECE_CHARS`] characters, cut at a
/// paragraph break where there is one, else at a space; none when empty.
fn cut(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if rest.chars().count() <= PIECE_CHARS {
            pieces.push(rest.to_string());
            break;
        }
        let limit = rest
            .char_indices()
            .nth(PIECE_CHARS)
            .map_or(rest.len(), |(i, _)| i);
        let window = &rest[..limit];
        let at = window
            .rfind("\n\n")
            .or_else(|| window.rfind(char::is_whitespace))
            .filter(|&i| i > 0)
            .unwrap_or(limit);
        pieces.push(rest[..at].trim().to_string());
        rest = rest[at..].trim_start();
    }
    pieces
}

fn key(parts: &[&str]) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().to_hex().to_string()
}

/// The deepest level of sections whose summaries, in reading order, fit
/// `budget` characters: every section at that depth or above is shown.
/// The document itself (depth 0) is always shown.
pub fn depth_that_fits(plan: &Plan, summary_chars: &dyn Fn(usize) -> usize, budget: usize) -> u32 {
    let deepest = plan.sections.iter().map(|s| s.depth).max().unwrap_or(0);
    let mut fits = 0;
    for depth in 1..=deepest {
        let total: usize = (0..plan.sections.len())
            .filter(|&i| plan.sections[i].depth <= depth)
            .map(summary_chars)
            .sum();
        if total > budget {
            break;
        }
        fits = depth;
    }
    fits
}

#[cfg(test)]
mod tests {
    use super::*;
    use folio_documents::loaders::{load, Format, LoadOptions};

    fn tree(markdown: &str) -> StructureTree {
        load(
            Format::Markdown,
            markdown.as_bytes(),
            "doc",
            &LoadOptions::budget(u64::MAX),
        )
        .unwrap()
        .tree
    }

    const BOOK: &str = "# Strings\n\nIntro text.\n\n## Creating\n\nNew strings.\n\n## Updating\n\nPush and plus.\n\n### With format!\n\nThe macro.\n";

    #[test]
    fn sections_come_children_first_with_their_own_text_and_spans() {
        let plan = Plan::of(&tree(BOOK), "model");
        let paths: Vec<&str> = plan
            .sections
            .iter()
            .map(|s| s.heading_path.as_str())
            .collect();
        assert_eq!(
            paths,
            [
                "Strings › Creating",
                "Strings › Updating › With format!",
                "Strings › Updating",
                "Strings"
            ]
        );
        let updating = &plan.sections[2];
        assert_eq!(updating.pieces.len(), 1);
        assert_eq!(updating.pieces[0].text, "Push and plus.");
        assert_eq!(updating.children, vec![1]);
        let whole = &BOOK[updating.span.start..updating.span.end];
        assert!(
            whole.starts_with("## Updating") && whole.trim_end().ends_with("The macro."),
            "{whole:?}"
        );
        assert_eq!(plan.sections.last().map(|s| s.node), Some(ROOT));
        assert_eq!(plan.calls_needed(&|_| false), plan.sections.len());
    }

    #[test]
    fn an_edit_changes_the_keys_of_its_section_and_those_above_only() {
        let before = Plan::of(&tree(BOOK), "model");
        let edited = Plan::of(
            &tree(&BOOK.replace("The macro.", "The format macro.")),
            "model",
        );
        let changed: Vec<&str> = before
            .sections
            .iter()
            .zip(&edited.sections)
            .filter(|(a, b)| a.key != b.key)
            .map(|(a, _)| a.heading_path.as_str())
            .collect();
        assert!(changed.contains(&"Strings › Updating › With format!"));
        assert!(changed.contains(&"Strings › Updating"));
        assert!(!changed.contains(&"Strings › Creating"));
        let cached: std::collections::HashSet<String> =
            before.sections.iter().map(|s| s.key.clone()).collect();
        assert_eq!(
            edited.calls_needed(&|k| cached.contains(k)),
            changed.len(),
            "only the changed sections are summarised again"
        );
        let other_model = Plan::of(&tree(BOOK), "another model");
        assert!(other_model
            .sections
            .iter()
            .all(|s| !cached.contains(&s.key)));
    }

    #[test]
    fn long_own_text_is_cut_into_pieces_at_paragraph_breaks() {
        let paragraph = "word ".repeat(250);
        let long = format!("# Long\n\n{}", [paragraph.trim(); 8].join("\n\n"));
        let plan = Plan::of(&tree(&long), "model");
        let section = plan
            .sections
            .iter()
            .find(|s| s.heading_path == "Long")
            .unwrap();
        assert!(section.is_split());
        assert!(section
            .pieces
            .iter()
            .all(|p| p.text.chars().count() <= PIECE_CHARS && p.text.starts_with("word")));
        let words: usize = section
            .pieces
            .iter()
            .map(|p| p.text.split_whitespace().count())
            .sum();
        assert_eq!(words, 8 * 250, "nothing is lost between pieces");
        assert_eq!(
            plan.calls_needed(&|_| false),
            plan.sections.len() + section.pieces.len()
        );
        assert_eq!(cut("x".repeat(PIECE_CHARS + 1).as_str()).len(), 2);
    }

    #[test]
    fn the_depth_shown_is_the_deepest_that_fits() {
        let plan = Plan::of(&tree(BOOK), "model");
        let chars = |_: usize| 100;
        let at = |budget| depth_that_fits(&plan, &chars, budget);
        let count = |depth: u32| plan.sections.iter().filter(|s| s.depth <= depth).count() * 100;
        assert_eq!(
            at(usize::MAX),
            plan.sections.iter().map(|s| s.depth).max().unwrap()
        );
        assert_eq!(at(count(1)), 1);
        assert_eq!(at(0), 0);
    }
}
