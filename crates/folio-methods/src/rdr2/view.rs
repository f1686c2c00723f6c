//! The subtree as the router reads it: one `id: text` line per node,
//! indented by depth (the paper's format), inside a character budget.
//! Long passages are shortened with a marker; when even that does not fit,
//! whole nodes give way to a marker line saying how many were left out, so
//! nothing leaves the tree unannounced. The headings above what is in view,
//! and the passages retrieval hit, always stay.

use std::collections::{BTreeMap, BTreeSet};

use super::subtree::Subtree;
use folio_documents::structure_tree::{NodeKind, ROOT};

/// A heading longer than this is not a heading; its tail is cut.
const HEADING_CHARS: usize = 120;
/// About one retrieval chunk: a hit is shown whole up to this.
const PASSAGE_CHARS: usize = 1200;
/// Below this a passage no longer says what it is about.
const PASSAGE_FLOOR: usize = 200;
const CUT_MARK: &str = " […]";

#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Show the headings (false for the `no-structure` ablation).
    pub structure: bool,
    /// Mark collapsed headings as expandable.
    pub offer_expand: bool,
    pub budget_chars: usize,
}

#[derive(Debug, Default)]
pub struct View {
    pub text: String,
    /// Content nodes shown, which the router may select.
    pub shown: BTreeSet<usize>,
    /// Headings shown collapsed, which the router may expand.
    pub collapsed: BTreeSet<usize>,
    pub truncated: Vec<usize>,
    pub elided: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    /// The root and the headings above what is in view.
    Frame,
    Hit,
    Heading,
    Context,
}

pub fn render(subtree: &Subtree, hits: &BTreeSet<usize>, layout: Layout) -> View {
    let tree = subtree.tree();
    let visible = subtree.visible();
    let mut frame = BTreeSet::new();
    if layout.structure {
        frame.insert(ROOT);
        for &id in visible {
            let mut up = tree.node(id).parent;
            while let Some(p) = up {
                frame.insert(p);
                up = tree.node(p).parent;
            }
        }
    }
    let candidates: Vec<usize> = (0..tree.len())
        .filter(|&id| visible.contains(&id) || (layout.structure && !is_content(subtree, id)))
        .collect();

    let line = |id: usize, cap: usize| -> (String, bool) {
        let node = tree.node(id);
        let depth = if layout.structure { node.depth } else { 0 };
        let indent = "  ".repeat(depth as usize);
        match node.kind {
            NodeKind::Structure => {
                let (title, _) = shortened(&node.text, HEADING_CHARS);
                let hashes = "#".repeat(node.depth as usize + 1);
                let mark = if layout.offer_expand && subtree.is_collapsed(id) {
                    " (collapsed)"
                } else {
                    ""
                };
                (format!("{indent}{id}: {hashes} {title}{mark}\n"), false)
            }
            NodeKind::Content => {
                let (text, cut) = shortened(&node.text, cap);
                (format!("{indent}{id}: {text}\n"), cut)
            }
        }
    };
    let tier = |id: usize| {
        if frame.contains(&id) {
            Tier::Frame
        } else if hits.contains(&id) {
            Tier::Hit
        } else if !is_content(subtree, id) {
            Tier::Heading
        } else {
            Tier::Context
        }
    };

    // Every line is formatted once: the fixed lines first, since their
    // length decides how much room the context passages share.
    let mut lines: BTreeMap<usize, (String, bool)> = candidates
        .iter()
        .filter(|&&id| tier(id) != Tier::Context)
        .map(|&id| (id, line(id, PASSAGE_CHARS)))
        .collect();
    let fixed: usize = lines.values().map(|(text, _)| text.chars().count()).sum();
    let context: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&id| tier(id) == Tier::Context)
        .collect();
    if !context.is_empty() {
        let share = (layout.budget_chars.saturating_sub(fixed) / context.len())
            .clamp(PASSAGE_FLOOR, PASSAGE_CHARS);
        lines.extend(context.iter().map(|&id| (id, line(id, share))));
    }

    let nearest_hit = |id: usize| hits.iter().map(|&h| h.abs_diff(id)).min().unwrap_or(0);
    let mut order = candidates.clone();
    order.sort_by_key(|&id| {
        let t = tier(id);
        let closeness = match t {
            Tier::Heading => tree.node(id).depth as usize,
            Tier::Context => nearest_hit(id),
            _ => 0,
        };
        (t, closeness, id)
    });
    let mut included = BTreeSet::new();
    let mut used = 0;
    for id in order {
        let size = lines[&id].0.chars().count();
        let t = tier(id);
        let parent_shown = tree.node(id).parent.is_none_or(|p| included.contains(&p));
        let fits = used + size <= layout.budget_chars;
        if t <= Tier::Hit || (fits && (t != Tier::Heading || parent_shown)) {
            included.insert(id);
            used += size;
        }
    }

    let mut view = View::default();
    let mut left_out: Option<(usize, usize)> = None;
    for &id in &candidates {
        if !included.contains(&id) {
            let depth = if layout.structure {
                tree.node(id).depth
            } else {
                0
            };
            let run = left_out.get_or_insert((depth as usize, 0));
            run.1 += 1;
            view.elided += 1;
            continue;
        }
        flush_left_out(&mut view.text, left_out.take());
        let (text, cut) = &lines[&id];
        view.text.push_str(text);
        if is_content(subtree, id) {
            view.shown.insert(id);
            if *cut {
                view.truncated.push(id);
            }
        } else if layout.offer_expand && subtree.is_collapsed(id) {
            view.collapsed.insert(id);
        }
    }
    flush_left_out(&mut view.text, left_out);
    view
}

fn is_content(subtree: &Subtree, id: usize) -> bool {
    subtree.tree().node(id).kind == NodeKind::Content
}

fn flush_left_out(text: &mut String, run: Option<(usize, usize)>) {
    if let Some((depth, count)) = run {
        let noun = if count == 1 { "node" } else { "nodes" };
        text.push_str(&format!(
            "{}… {count} {noun} not shown\n",
            "  ".repeat(depth)
        ));
    }
}

/// `text` on one line, cut to `cap` characters with a marker.
pub fn shortened(text: &str, cap: usize) -> (String, bool) {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= cap {
        return (flat, false);
    }
    let kept: String = flat
        .chars()
        .take(cap.saturating_sub(CUT_MARK.len()))
        .collect();
    (format!("{}{CUT_MARK}", kept.trim_end()), true)
}

#[cfg(test)]
mod tests {
    use super::super::subtree::tests::six_flags;
    use super::*;
    use folio_documents::structure_tree::{Span, StructureTree};

    fn layout(budget_chars: usize) -> Layout {
        Layout {
            structure: true,
            offer_expand: true,
            budget_chars,
        }
    }

    #[test]
    fn headings_frame_the_lit_passages_in_the_papers_format() {
        let tree = six_flags();
        let hits = BTreeSet::from([9]);
        let view = render(&Subtree::new(&tree, &hits), &hits, layout(4000));
        let expected = "\
0: # Six Flags Over Texas
  1: ## Introduction (collapsed)
  4: ## History
    5: ### 1990s (collapsed)
    7: ### 2000s
      8: In 2001 the park introduced Titan, its tallest, fastest, longest roller coaster.
      9: In 2003 it opened the Superman Tower of Power, the tallest ride of its kind.
  10: ## Firsts, bests, and other records
    11: ### Records (collapsed)
    16: ### Awards (collapsed)
";
        assert_eq!(view.text, expected);
        assert_eq!(view.shown, BTreeSet::from([8, 9]));
        assert_eq!(view.collapsed, BTreeSet::from([1, 5, 11, 16]));
        assert!(view.truncated.is_empty() && view.elided == 0);
    }

    #[test]
    fn without_expansion_nothing_is_marked_collapsed() {
        let tree = six_flags();
        let hits = BTreeSet::from([9]);
        let mut l = layout(4000);
        l.offer_expand = false;
        let view = render(&Subtree::new(&tree, &hits), &hits, l);
        assert!(!view.text.contains("collapsed") && view.collapsed.is_empty());
    }

    #[test]
    fn no_structure_shows_the_passage_alone() {
        let tree = six_flags();
        let hits = BTreeSet::from([8, 9]);
        let l = Layout {
            structure: false,
            offer_expand: false,
            budget_chars: 4000,
        };
        let view = render(&Subtree::new(&tree, &hits), &hits, l);
        assert!(view.text.starts_with("8: In 2001"));
        assert_eq!(view.text.lines().count(), 2);
    }

    #[test]
    fn over_budget_context_is_shortened_then_left_out_with_a_marker() {
        let mut tree = StructureTree::new("Long notes", Span::default());
        let long = "word ".repeat(200);
        for _ in 0..30 {
            tree.push(ROOT, NodeKind::Content, long.as_str(), Span::default());
        }
        let hits = BTreeSet::from([15]);
        let view = render(&Subtree::new(&tree, &hits), &hits, layout(3000));
        assert!(
            view.text.chars().count() <= 3000 + 60,
            "{}",
            view.text.len()
        );
        assert!(view.shown.contains(&15) && view.shown.contains(&14) && view.shown.contains(&16));
        assert!(!view.truncated.contains(&15), "the hit is whole");
        assert!(view.truncated.contains(&14) && view.text.contains(CUT_MARK));
        assert!(view.elided > 0);
        assert_eq!(view.shown.len() + view.elided, 30);
        // Nodes far from the hit go first, and each run of them is announced.
        assert!(
            view.text.starts_with("0: # Long notes\n  … "),
            "{}",
            view.text
        );
        let markers: usize = view
            .text
            .lines()
            .filter(|l| l.trim_start().starts_with('…'))
            .map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap()
                    .parse::<usize>()
                    .unwrap()
            })
            .sum();
        assert_eq!(markers, view.elided);
    }

    #[test]
    fn headings_give_way_before_the_frame_does() {
        let mut tree = StructureTree::new("Manual", Span::default());
        let mut target = 0;
        for i in 0..200 {
            let h = tree.push(
                ROOT,
                NodeKind::Structure,
                format!("Section {i}"),
                Span::default(),
            );
            let c = tree.push(h, NodeKind::Content, format!("Text {i}"), Span::default());
            if i == 150 {
                target = c;
            }
        }
        let hits = BTreeSet::from([target]);
        let view = render(&Subtree::new(&tree, &hits), &hits, layout(1000));
        assert!(view.text.contains("Section 150") && view.text.contains("Text 150"));
        assert!(view.elided > 100 && view.text.contains("not shown"));
        assert!(view
            .collapsed
            .iter()
            .all(|h| view.text.contains(&format!("{h}: "))));
    }
}
