//! The reasoning graph as the trace stores it: nodes by id (node 0 is the
//! question) and edges from a step to the steps that follow it. New nodes
//! only ever hang below the current sinks, so the graph stays acyclic; the
//! check here makes that a tested invariant rather than a hope.

use std::collections::{BTreeSet, VecDeque};

use super::trace::{ReasoningEdge, ReasoningNode};

pub const SOURCE: usize = 0;

#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub nodes: Vec<ReasoningNode>,
    pub edges: Vec<ReasoningEdge>,
}

impl Graph {
    pub fn new(question: &str) -> Graph {
        Graph {
            nodes: vec![ReasoningNode {
                id: SOURCE,
                text: question.trim().to_string(),
                depth: 0,
                is_final: false,
                passages: Vec::new(),
                knowledge: None,
                check: None,
            }],
            edges: Vec::new(),
        }
    }

    /// Adds a step below `parents` and returns its id.
    pub fn add(&mut self, text: String, is_final: bool, parents: &BTreeSet<usize>) -> usize {
        let id = self.nodes.len();
        let depth = parents
            .iter()
            .map(|&p| self.nodes[p].depth + 1)
            .max()
            .unwrap_or(1);
        self.nodes.push(ReasoningNode {
            id,
            text,
            depth,
            is_final,
            passages: Vec::new(),
            knowledge: None,
            check: None,
        });
        self.edges
            .extend(parents.iter().map(|&from| ReasoningEdge { from, to: id }));
        id
    }

    pub fn steps(&self) -> impl Iterator<Item = &ReasoningNode> {
        self.nodes.iter().skip(1)
    }

    /// The steps `id` follows: more than one where steps merged or a step
    /// joins complementary ones.
    pub fn parents(&self, id: usize) -> impl Iterator<Item = usize> + '_ {
        self.edges
            .iter()
            .filter(move |e| e.to == id)
            .map(|e| e.from)
    }

    fn children(&self, id: usize) -> impl Iterator<Item = usize> + '_ {
        self.edges
            .iter()
            .filter(move |e| e.from == id)
            .map(|e| e.to)
    }

    /// Every step before `id` on any path to it, shallowest first: the
    /// known conditions when the next steps after `id` are proposed.
    pub fn ancestors(&self, id: usize) -> Vec<usize> {
        let mut seen = BTreeSet::new();
        let mut queue = VecDeque::from([id]);
        while let Some(n) = queue.pop_front() {
            for e in self.edges.iter().filter(|e| e.to == n) {
                if seen.insert(e.from) {
                    queue.push_back(e.from);
                }
            }
        }
        let mut ancestors: Vec<usize> = seen.into_iter().filter(|&a| a != SOURCE).collect();
        ancestors.sort_by_key(|&a| (self.nodes[a].depth, a));
        ancestors
    }

    /// Whether the edges admit a topological order (Kahn's algorithm).
    pub fn is_acyclic(&self) -> bool {
        let mut indegree = vec![0usize; self.nodes.len()];
        for e in &self.edges {
            indegree[e.to] += 1;
        }
        let mut ready: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| indegree[n] == 0)
            .collect();
        let mut visited = 0;
        while let Some(n) = ready.pop() {
            visited += 1;
            for child in self.children(n).collect::<Vec<_>>() {
                indegree[child] -= 1;
                if indegree[child] == 0 {
                    ready.push(child);
                }
            }
        }
        visited == self.nodes.len()
    }

    /// Every path from the question to a sink, in depth-first order with
    /// children in id order.
    pub fn paths(&self) -> Vec<Vec<usize>> {
        let mut paths = Vec::new();
        let mut stack = vec![vec![SOURCE]];
        while let Some(path) = stack.pop() {
            let last = *path.last().expect("paths are never empty");
            let mut children: Vec<usize> = self.children(last).collect();
            if children.is_empty() {
                paths.push(path);
                continue;
            }
            children.sort_unstable_by(|a, b| b.cmp(a));
            for child in children {
                let mut longer = path.clone();
                longer.push(child);
                stack.push(longer);
            }
        }
        paths
    }
}
