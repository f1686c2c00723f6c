//! One document's route (RDR² section 3.3): show the router the subtree,
//! take the passages it selects, queue the headings it expands, and give
//! each opened heading a turn of its own, until none is left or the
//! expansions run out. A refusal ends the subtree in view, not the route;
//! when the opened headings gave nothing, the passages their expansion
//! pushed out come back for a last turn.
//! Each step is reported as it finishes, so the app can follow the route
//! live.

use super::prompts;
use std::collections::{BTreeSet, VecDeque};

use minijinja::context;

use super::parse::{grammar, parse, schema, Reply};
use super::subtree::Subtree;
use super::trace::{
    ActionKind, IgnoredAction, Route, RouteAction, RouteNode, RouteOutcome, RouteStep,
};
use super::units::{Routable, Unit};
use super::view::{render, shortened, Layout, View};
use crate::context::note_if_cut_off;
use crate::{MethodContext, MethodError, Params};
use folio_documents::structure_tree::NodeKind;
use folio_llm::prompts::as_document_data;
use folio_llm::GenerateOptions;

const ROUTE: &str = "route";
/// A routing reply is a few short action lines (the paper measures about
/// 20 output tokens a turn); a model that rambles past this is cut off
/// rather than left to burn the run's time.
const ROUTE_MAX_TOKENS: u32 = 128;
/// Passage text kept in the trace's copy of the tree; the selected
/// passages are kept whole with the answer.
const TRACE_TEXT_CHARS: usize = 300;

#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub structure: bool,
    /// The router may reply "Cannot answer" (off for `no-refuse`).
    pub refuse: bool,
    pub expand_iter: usize,
    pub budget_chars: usize,
}

/// A route not yet started.
pub fn pending(unit: &Unit) -> Route {
    Route {
        path: unit.path.clone(),
        title: String::new(),
        nodes: Vec::new(),
        retrieved: unit.retrieved.clone(),
        hits: Vec::new(),
        steps: Vec::new(),
        selected: Vec::new(),
        outcome: RouteOutcome::Routing,
        notes: Vec::new(),
    }
}

pub async fn route(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    unit: &Unit,
    settings: Settings,
    on_step: impl Fn(&Route),
) -> Result<Route, MethodError> {
    let mut route = pending(unit);
    let doc = match &unit.routable {
        Ok(doc) => doc,
        Err(why) => {
            route.outcome = RouteOutcome::FellBack;
            route
                .notes
                .push(format!("{why}; its retrieved passages were used"));
            return Ok(route);
        }
    };
    route.title = doc.tree.title().to_string();
    route.hits = doc.hits.iter().copied().collect();
    let mut subtree = if settings.structure {
        Subtree::new(&doc.tree, &doc.hits)
    } else {
        Subtree::only(&doc.tree, &doc.hits)
    };
    let params = &Params {
        max_tokens: params.max_tokens.min(ROUTE_MAX_TOKENS),
        ..params.clone()
    };
    let mut selected = BTreeSet::new();
    // Headings opened and not yet visited: each gets a turn of its own, so
    // a refusal ends only the subtree in view (the paper's [REF] scope).
    let mut opened: VecDeque<usize> = VecDeque::new();
    // Whether the view holds passages an expansion had pushed out.
    let mut returned = false;
    for step in 0..=settings.expand_iter {
        let offer_expand = settings.structure && step < settings.expand_iter && !returned;
        let layout = Layout {
            structure: settings.structure,
            offer_expand,
            budget_chars: settings.budget_chars,
        };
        let view = render(&subtree, &doc.hits, layout);
        route.nodes = nodes_seen(&subtree, settings.structure);
        let options = GenerateOptions {
            grammar: Some(grammar(
                &view.shown,
                &view.collapsed,
                offer_expand,
                settings.refuse,
            )),
            schema: Some(schema(
                &view.shown,
                &view.collapsed,
                offer_expand,
                settings.refuse,
            )),
            ..ctx.options(params)
        };
        let completion = ctx
            .generate_with(
                ROUTE,
                &prompts::ROUTE,
                context!(
                    question,
                    title => as_document_data(&route.title).replace('"', "'"),
                    tree => as_document_data(view.text.trim_end()),
                    expand => offer_expand,
                    refuse => settings.refuse,
                ),
                &options,
            )
            .await?;
        note_if_cut_off(ROUTE, &completion, &mut route.notes);
        let judged = judge(parse(&completion.text), &view, doc, layout, completion.text);
        let usable = !judged.actions.is_empty() || judged.refused;
        if judged.refused && !judged.actions.is_empty() {
            route.notes.push(format!(
                "step {}: the reply both acted and refused; its actions were taken",
                step + 1
            ));
        }
        selected.extend(
            judged
                .actions
                .iter()
                .filter(|a| a.kind == ActionKind::Answer)
                .map(|a| a.node),
        );
        for heading in judged
            .actions
            .iter()
            .filter(|a| a.kind == ActionKind::Expand)
            .map(|a| a.node)
        {
            if !opened.contains(&heading) {
                opened.push_back(heading);
            }
        }
        route.steps.push(judged);
        route.selected = selected.iter().copied().collect();
        if !usable {
            break;
        }
        let Some(next) = opened.pop_front() else {
            // The RST keeps its retrieval scope: when the detours found
            // nothing, what they pushed out of view gets a last turn.
            if selected.is_empty()
                && !returned
                && step < settings.expand_iter
                && subtree.bring_back()
            {
                returned = true;
                route.notes.push(format!(
                    "step {}: the opened headings gave nothing; the passages their expansion pushed out came back into view",
                    step + 1
                ));
                on_step(&route);
                continue;
            }
            break;
        };
        if step == settings.expand_iter {
            opened.push_front(next);
            break;
        }
        subtree.expand(&[next]);
        on_step(&route);
    }
    if !opened.is_empty() {
        route.notes.push(format!(
            "{} opened heading(s) were not visited: the route reached expand-iter",
            opened.len()
        ));
    }
    route.nodes = nodes_seen(&subtree, settings.structure);
    route.outcome = if !selected.is_empty() {
        RouteOutcome::Selected
    } else if route
        .steps
        .iter()
        .any(|s| s.refused && s.actions.is_empty())
    {
        RouteOutcome::Refused
    } else {
        route
            .notes
            .push("no usable routing reply; its retrieved passages were used".into());
        RouteOutcome::FellBack
    };
    Ok(route)
}

/// The reply's actions checked against what the router was shown: only
/// visible passages can be selected and only collapsed headings expanded.
fn judge(reply: Reply, view: &View, doc: &Routable, layout: Layout, raw: String) -> RouteStep {
    let mut step = RouteStep {
        visible: view.shown.iter().copied().collect(),
        collapsed: view.collapsed.iter().copied().collect(),
        truncated: view.truncated.clone(),
        elided: view.elided,
        reply: raw,
        actions: Vec::new(),
        ignored: reply.ignored,
        refused: reply.refused,
    };
    for (kind, node) in reply.actions {
        let action = RouteAction { kind, node };
        if step.actions.contains(&action) {
            continue;
        }
        match why_not(kind, node, view, doc, layout) {
            None => step.actions.push(action),
            Some(reason) => step.ignored.push(IgnoredAction {
                text: match kind {
                    ActionKind::Answer => format!("[ANSWER] {node}"),
                    ActionKind::Expand => format!("[EXPAND] {node}"),
                },
                reason,
            }),
        }
    }
    step
}

fn why_not(
    kind: ActionKind,
    node: usize,
    view: &View,
    doc: &Routable,
    layout: Layout,
) -> Option<String> {
    if node >= doc.tree.len() {
        return Some(format!("there is no node {node}"));
    }
    let is_heading = doc.tree.node(node).kind == NodeKind::Structure;
    match kind {
        ActionKind::Answer if view.shown.contains(&node) => None,
        ActionKind::Answer if is_heading => Some(format!(
            "node {node} is a heading; only passages can be selected"
        )),
        ActionKind::Answer => Some(format!("passage {node} was not shown")),
        ActionKind::Expand if !layout.offer_expand => Some(if layout.structure {
            "no expansions were left".into()
        } else {
            "expanding is off in this variant".into()
        }),
        ActionKind::Expand if view.collapsed.contains(&node) => None,
        ActionKind::Expand if !is_heading => Some(format!(
            "node {node} is a passage; only collapsed headings can be expanded"
        )),
        ActionKind::Expand => Some(format!("heading {node} was not shown collapsed")),
    }
}

/// The tree as far as the route has seen it: every heading (when the
/// variant shows headings) and every passage that was ever in view.
fn nodes_seen(subtree: &Subtree, structure: bool) -> Vec<RouteNode> {
    let tree = subtree.tree();
    tree.nodes()
        .iter()
        .enumerate()
        .filter(|(id, n)| {
            subtree.seen().contains(id) || (structure && n.kind == NodeKind::Structure)
        })
        .map(|(id, n)| RouteNode {
            id,
            parent: n.parent.filter(|_| structure),
            kind: n.kind,
            depth: if structure { n.depth } else { 0 },
            text: match n.kind {
                NodeKind::Structure => n.text.clone(),
                NodeKind::Content => shortened(&n.text, TRACE_TEXT_CHARS).0,
            },
        })
        .collect()
}
