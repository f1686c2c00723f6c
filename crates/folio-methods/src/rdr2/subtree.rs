//! The retrieval subtree (RST, RDR² section 3.2 and Algorithm 1): all of a
//! document's headings, and the content nodes the route has in view. It
//! starts from the nodes retrieval hit; expanding a heading replaces the
//! content in view with that heading's own, so the view stays small however
//! long the route. What an expansion pushed out of view can be brought back
//! when the detour found nothing.

use std::collections::BTreeSet;

use folio_documents::structure_tree::{NodeKind, StructureTree};

pub struct Subtree<'t> {
    tree: &'t StructureTree,
    children: Vec<Vec<usize>>,
    visible: BTreeSet<usize>,
    seen: BTreeSet<usize>,
    /// Content nodes an expansion took out of view that have not been in
    /// view since.
    pushed_out: BTreeSet<usize>,
}

impl<'t> Subtree<'t> {
    /// The subtree lit from `hits`, the content nodes retrieval found.
    pub fn new(tree: &'t StructureTree, hits: &BTreeSet<usize>) -> Subtree<'t> {
        let mut children = vec![Vec::new(); tree.len()];
        for (id, node) in tree.nodes().iter().enumerate() {
            if let Some(parent) = node.parent {
                children[parent].push(id);
            }
        }
        let mut subtree = Subtree {
            tree,
            children,
            visible: BTreeSet::new(),
            seen: BTreeSet::new(),
            pushed_out: BTreeSet::new(),
        };
        subtree.show(subtree.light(hits.iter().copied()));
        subtree
    }

    /// Only `hits` in view, and nothing to expand: the `no-structure`
    /// ablation, where a passage is judged alone.
    pub fn only(tree: &'t StructureTree, hits: &BTreeSet<usize>) -> Subtree<'t> {
        let mut subtree = Subtree::new(tree, &BTreeSet::new());
        let content = hits.iter().copied().filter(|&h| subtree.is_content(h));
        subtree.show(content.collect());
        subtree
    }

    pub fn tree(&self) -> &'t StructureTree {
        self.tree
    }

    /// Content nodes in view now.
    pub fn visible(&self) -> &BTreeSet<usize> {
        &self.visible
    }

    /// Content nodes that were in view at any point.
    pub fn seen(&self) -> &BTreeSet<usize> {
        &self.seen
    }

    fn is_content(&self, id: usize) -> bool {
        self.tree.node(id).kind == NodeKind::Content
    }

    /// A heading with text directly under it, none of which is in view.
    pub fn is_collapsed(&self, id: usize) -> bool {
        !self.is_content(id)
            && self.children[id].iter().any(|&c| self.is_content(c))
            && !self.children[id].iter().any(|c| self.visible.contains(c))
    }

    /// Unfolds `headings`: their content (and what hangs below it) becomes
    /// the view, replacing what was in view before.
    pub fn expand(&mut self, headings: &[usize]) {
        let first_content = headings.iter().filter_map(|&h| {
            self.children[h]
                .iter()
                .copied()
                .find(|&c| self.is_content(c))
        });
        let lit = self.light(first_content.collect::<Vec<_>>());
        self.pushed_out
            .extend(self.visible.difference(&lit).copied());
        self.show(lit);
    }

    /// Puts what expansions pushed out of view back in view, in place of
    /// what is there; `false` when there is nothing to return.
    pub fn bring_back(&mut self) -> bool {
        if self.pushed_out.is_empty() {
            return false;
        }
        let back = std::mem::take(&mut self.pushed_out);
        self.show(back);
        true
    }

    fn show(&mut self, lit: BTreeSet<usize>) {
        self.seen.extend(lit.iter().copied());
        self.pushed_out.retain(|n| !lit.contains(n));
        self.visible = lit;
    }

    /// Algorithm 1: each node with its content siblings, its content
    /// ancestors up to the nearest heading, and everything of content type
    /// below those siblings.
    fn light(&self, nodes: impl IntoIterator<Item = usize>) -> BTreeSet<usize> {
        let mut lit = BTreeSet::new();
        for node in nodes {
            if !self.is_content(node) {
                continue;
            }
            let siblings: Vec<usize> = match self.tree.node(node).parent {
                Some(parent) => self.children[parent]
                    .iter()
                    .copied()
                    .filter(|&s| self.is_content(s))
                    .collect(),
                None => vec![node],
            };
            let mut current = self.tree.node(node).parent;
            while let Some(up) = current.filter(|&up| self.is_content(up)) {
                lit.insert(up);
                current = self.tree.node(up).parent;
            }
            for sibling in siblings {
                self.light_descendants(sibling, &mut lit);
            }
        }
        lit
    }

    fn light_descendants(&self, id: usize, lit: &mut BTreeSet<usize>) {
        lit.insert(id);
        for &child in &self.children[id] {
            if self.is_content(child) {
                self.light_descendants(child, lit);
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use folio_documents::structure_tree::{Span, ROOT};

    /// The Six Flags page of the paper's Appendix D, cut down: ids differ
    /// from the paper's (our root is 0), the shape is the same.
    pub fn six_flags() -> StructureTree {
        let mut t = StructureTree::new("Six Flags Over Texas", Span::default());
        let mut add = |parent, kind, text: &str| t.push(parent, kind, text, Span::default());
        let intro = add(ROOT, NodeKind::Structure, "Introduction"); // 1
        add(
            intro,
            NodeKind::Content,
            "Six Flags Over Texas is a 212-acre theme park in Arlington, Texas.",
        ); // 2
        add(
            intro,
            NodeKind::Content,
            "The park is managed by the Six Flags Entertainment Corp.",
        ); // 3
        let history = add(ROOT, NodeKind::Structure, "History"); // 4
        let nineties = add(history, NodeKind::Structure, "1990s"); // 5
        add(
            nineties,
            NodeKind::Content,
            "The decade started with the Texas Giant roller coaster.",
        ); // 6
        let noughties = add(history, NodeKind::Structure, "2000s"); // 7
        add(
            noughties,
            NodeKind::Content,
            "In 2001 the park introduced Titan, its tallest, fastest, longest roller coaster.",
        ); // 8
        add(
            noughties,
            NodeKind::Content,
            "In 2003 it opened the Superman Tower of Power, the tallest ride of its kind.",
        ); // 9
        let records_parent = add(
            ROOT,
            NodeKind::Structure,
            "Firsts, bests, and other records",
        ); // 10
        let records = add(records_parent, NodeKind::Structure, "Records"); // 11
        let list = add(records, NodeKind::Content, "Records held by the park:"); // 12
        add(
            list,
            NodeKind::Content,
            "Tallest roller coaster in Texas - Titan (245ft)",
        ); // 13
        add(
            list,
            NodeKind::Content,
            "Largest land-based oil derrick (300ft)",
        ); // 14
        add(
            list,
            NodeKind::Content,
            "Tallest swing ride in the world - Texas SkyScreamer (400ft)",
        ); // 15
        let awards = add(records_parent, NodeKind::Structure, "Awards"); // 16
        add(awards, NodeKind::Content, "Golden Ticket Awards, 2005."); // 17
        t
    }

    fn ids(set: &BTreeSet<usize>) -> Vec<usize> {
        set.iter().copied().collect()
    }

    #[test]
    fn a_hit_lights_its_content_siblings_only() {
        let tree = six_flags();
        let st = Subtree::new(&tree, &BTreeSet::from([9]));
        assert_eq!(ids(st.visible()), [8, 9]);
        assert!(st.is_collapsed(1) && st.is_collapsed(5) && !st.is_collapsed(7));
        assert!(
            !st.is_collapsed(4),
            "History has headings, not text, under it"
        );
    }

    #[test]
    fn a_nested_hit_lights_content_ancestors_and_the_siblings_descendants() {
        let tree = six_flags();
        let st = Subtree::new(&tree, &BTreeSet::from([14]));
        // 13 and 15 are siblings; 12 is the content ancestor below the
        // heading; the heading itself is structure and always there.
        assert_eq!(ids(st.visible()), [12, 13, 14, 15]);
        let st = Subtree::new(&tree, &BTreeSet::from([12]));
        assert_eq!(
            ids(st.visible()),
            [12, 13, 14, 15],
            "descendants of a lit node"
        );
    }

    #[test]
    fn hits_in_two_sections_light_both() {
        let tree = six_flags();
        let st = Subtree::new(&tree, &BTreeSet::from([6, 2]));
        assert_eq!(ids(st.visible()), [2, 3, 6]);
    }

    #[test]
    fn expanding_replaces_the_view_and_remembers_what_was_seen() {
        let tree = six_flags();
        let mut st = Subtree::new(&tree, &BTreeSet::from([6]));
        assert!(st.is_collapsed(11));
        st.expand(&[11]);
        assert_eq!(ids(st.visible()), [12, 13, 14, 15]);
        assert!(!st.is_collapsed(11) && st.is_collapsed(5));
        st.expand(&[1, 16]);
        assert_eq!(ids(st.visible()), [2, 3, 17]);
        assert_eq!(ids(st.seen()), [2, 3, 6, 12, 13, 14, 15, 17]);
    }

    #[test]
    fn what_expansions_pushed_out_comes_back() {
        let tree = six_flags();
        let mut st = Subtree::new(&tree, &BTreeSet::from([6]));
        let first = ids(st.visible());
        st.expand(&[11]);
        st.expand(&[1]);
        assert!(st.bring_back());
        let mut back = first.clone();
        back.extend([12, 13, 14, 15]);
        back.sort();
        assert_eq!(ids(st.visible()), back);
        assert!(
            !st.bring_back(),
            "what came back is no longer out, and what was in view is not returned"
        );
    }

    #[test]
    fn a_flat_document_is_all_in_view() {
        let mut tree = StructureTree::new("notes.txt", Span::default());
        for text in ["one", "two", "three"] {
            tree.push(ROOT, NodeKind::Content, text, Span::default());
        }
        let st = Subtree::new(&tree, &BTreeSet::from([2]));
        assert_eq!(ids(st.visible()), [1, 2, 3]);
        assert!(!st.is_collapsed(ROOT));
    }
}
