//! How an RDR2 answer was built: per document, the tree the router saw,
//! where retrieval lit it, and every routing step's actions, so the app can
//! replay the route one step at a time.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::markdown::{
    escape_label, file_url, ids, inline, option_name, write_notes, write_passages,
};
use crate::{Citation, MethodTrace, Passage, RetrievalPart};
use folio_core::choice::Choice;
use folio_documents::structure_tree::NodeKind;

/// The paper's method and its ablations (RDR², section 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum Rdr2Variant {
    /// Route through each document's tree, expanding headings.
    Full,
    /// No tree: each retrieved passage alone is accepted or refused.
    NoStructure,
    /// The tree, but one routing turn: select or refuse, never expand.
    NoExpand,
    /// The tree and expansions, but no refusal: every turn selects or
    /// expands at least one node (the paper's "w/o [REF]").
    NoRefuse,
}

impl Choice for Rdr2Variant {
    const ALL: &'static [Rdr2Variant] = &[
        Rdr2Variant::Full,
        Rdr2Variant::NoStructure,
        Rdr2Variant::NoExpand,
        Rdr2Variant::NoRefuse,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Rdr2Variant::Full => "full",
            Rdr2Variant::NoStructure => "no-structure",
            Rdr2Variant::NoExpand => "no-expand",
            Rdr2Variant::NoRefuse => "no-refuse",
        }
    }
}

/// An RDR² answer: the routes through the retrieved documents, and what
/// the reader made of the passages they selected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Rdr2Trace {
    #[serde(flatten)]
    #[ts(flatten)]
    pub routing: RoutedPart,
    /// What the reader saw, numbered as the answer cites it.
    pub passages: Vec<Passage>,
    pub unknown_citations: Vec<usize>,
    /// Every route refused, so the reader answered from no passages (as
    /// the paper's reader does): what an evaluation counts as a refusal.
    pub refused: bool,
    /// How the retriever found the passages routed through, when it is
    /// more than a search (the links it followed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<RetrievalPart>>", optional)]
    pub retrieval: Vec<RetrievalPart>,
}

/// How RDR²'s router chose passages for one query: the search it started
/// from and one route per document. As a retriever of another method, this
/// is its part of the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct RoutedPart {
    /// Empty in answers stored before routing became a retriever.
    #[serde(default)]
    pub query: String,
    pub variant: Rdr2Variant,
    pub k: usize,
    pub expand_iter: usize,
    /// The token budget of one routing view, and of the passages passed on.
    pub budget_tokens: usize,
    /// The chunks retrieval found, numbered by rank.
    pub retrieved: Vec<Passage>,
    /// One route per document (per retrieved passage for `no-structure`),
    /// in the order retrieval first found them.
    pub routes: Vec<Route>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Route {
    pub path: String,
    pub title: String,
    /// The part of the tree the route saw, in document order: every node
    /// that was ever shown to the router, with the headings above them.
    pub nodes: Vec<RouteNode>,
    /// Numbers of the retrieved passages that come from this document.
    pub retrieved: Vec<usize>,
    /// Content nodes the retrieved chunks cover: where the route started.
    pub hits: Vec<usize>,
    pub steps: Vec<RouteStep>,
    /// Content nodes chosen for the reader, in document order.
    pub selected: Vec<usize>,
    pub outcome: RouteOutcome,
    /// Why the route ended as it did, when that is not plain from the steps.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct RouteNode {
    pub id: usize,
    pub parent: Option<usize>,
    pub kind: NodeKind,
    pub depth: u32,
    /// A heading's title, or the start of a passage's text.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum RouteOutcome {
    /// Still routing (a live trace).
    Routing,
    /// The router chose passages.
    Selected,
    /// The router said the document cannot answer the question.
    Refused,
    /// The router's replies were unusable (or the document changed since it
    /// was retrieved): the reader gets the retrieved chunks instead.
    FellBack,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct RouteStep {
    /// Content nodes the router was shown, and so could select.
    pub visible: Vec<usize>,
    /// Headings it could expand at this step.
    pub collapsed: Vec<usize>,
    /// Shown nodes whose text was shortened to fit the budget.
    pub truncated: Vec<usize>,
    /// Nodes left out of the view to fit the budget (a marker stood in for them).
    pub elided: usize,
    /// The router's reply as it came.
    pub reply: String,
    pub actions: Vec<RouteAction>,
    /// Parts of the reply that were not usable actions, and why.
    pub ignored: Vec<IgnoredAction>,
    pub refused: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    Answer,
    Expand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct RouteAction {
    pub kind: ActionKind,
    pub node: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct IgnoredAction {
    pub text: String,
    pub reason: String,
}

impl MethodTrace for Rdr2Trace {
    fn passages(&self) -> Option<&[Passage]> {
        Some(&self.passages)
    }

    fn key_parts(&self) -> Vec<String> {
        let routes: Vec<String> = self
            .routing
            .routes
            .iter()
            .map(|r| {
                format!(
                    "{} ({:?}, {} selected)",
                    r.title,
                    r.outcome,
                    r.selected.len()
                )
            })
            .collect();
        vec![format!("routes: {}", routes.join("; "))]
    }

    fn refused(&self) -> bool {
        self.refused
    }

    crate::over_any_retriever!();

    fn write_markdown(&self, out: &mut String, citations: &[Citation]) {
        out.push_str("RDR² ");
        write_routing(out, &self.routing);
        write_passages(out, &self.passages, &self.unknown_citations, citations);
    }
}

/// RDR²'s routes through the searched documents in an exported answer,
/// after the words that introduce them, and its notes.
pub fn write_routing(out: &mut String, part: &RoutedPart) {
    let _ = writeln!(
        out,
        "({} variant) retrieved {} passages and routed through {} of their documents' structure trees (up to {} expansions each), keeping the passages the routes selected.\n",
        option_name(part.variant),
        part.retrieved.len(),
        part.routes.len(),
        part.expand_iter,
    );
    for route in &part.routes {
        write_route(out, route);
    }
    out.push('\n');
    write_notes(out, "Reading", &part.notes);
}

fn write_route(out: &mut String, route: &Route) {
    let outcome = match route.outcome {
        RouteOutcome::Routing => "unfinished".to_string(),
        RouteOutcome::Selected => format!("selected nodes {}", ids(&route.selected)),
        RouteOutcome::Refused => "refused".to_string(),
        RouteOutcome::FellBack => "fell back to its retrieved passages".to_string(),
    };
    let _ = writeln!(
        out,
        "- [{}]({}) — started from nodes {}; {outcome}",
        escape_label(&route.title),
        file_url(&route.path),
        ids(&route.hits),
    );
    for (i, step) in route.steps.iter().enumerate() {
        let actions: Vec<String> = step
            .actions
            .iter()
            .map(|a| match a.kind {
                ActionKind::Answer => format!("answer {}", a.node),
                ActionKind::Expand => format!("expand {}", a.node),
            })
            .chain(step.refused.then(|| "refuse".to_string()))
            .collect();
        let _ = writeln!(
            out,
            "  - step {}: saw passages {}; {}",
            i + 1,
            ids(&step.visible),
            if actions.is_empty() {
                "no usable action".to_string()
            } else {
                actions.join(", ")
            }
        );
        for ignored in &step.ignored {
            let _ = writeln!(
                out,
                "    - ignored `{}`: {}",
                ignored.text.replace('`', "'"),
                inline(&ignored.reason)
            );
        }
    }
    for note in &route.notes {
        let _ = writeln!(out, "  - {}", inline(note));
    }
}
