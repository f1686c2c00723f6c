//! The read step (RDR² eq. 7): the selected passages, document by document
//! in the order retrieval found them and in document order within each,
//! numbered for citing. A document whose route fell back gives its
//! retrieved chunks; a refused one gives nothing. When every document was
//! refused the reader still answers, from no passages, as the paper's does.

use super::prompts;
use std::collections::BTreeSet;

use minijinja::context;

use super::trace::{Rdr2Trace, RouteOutcome, RoutedPart};
use super::units::{Routable, Unit};
use super::view::shortened;
use super::CHARS_PER_TOKEN;
use crate::injection::suspected_instructions;
use crate::shown::shown;
use crate::{Answer, MethodContext, MethodError, Params, Passage, Trace};
use folio_documents::table;

const READ: &str = "read";

pub async fn read(
    ctx: &MethodContext<'_>,
    question: &str,
    params: &Params,
    units: &[Unit],
    mut routing: RoutedPart,
) -> Result<Answer, MethodError> {
    let budget_chars = routing.budget_tokens * CHARS_PER_TOKEN;
    let (passages, left_out) = reader_passages(units, &routing, budget_chars);
    note_left_out(&mut routing, left_out);
    let mut trace = Rdr2Trace {
        routing,
        passages,
        unknown_citations: Vec::new(),
        refused: false,
        retrieval: Vec::new(),
    };
    if trace.passages.is_empty() {
        trace.refused = true;
        trace.routing.notes.push(
            "the router refused every document, so the reader answered without passages".into(),
        );
    }
    ctx.checkpoint(&Trace::Rdr2(trace.clone()));
    let vars = context!(question, passages => shown(&trace.passages));
    let answer = ctx
        .cited_answer(READ, &prompts::READ, vars, params, &trace.passages)
        .await?;
    trace.unknown_citations = answer.unknown;
    Ok(Answer {
        text: answer.text,
        citations: answer.citations,
        trace: Trace::Rdr2(trace),
        cut_off: answer.cut_off,
    })
}

/// Says in the part's notes how many selected passages the budget left out.
pub fn note_left_out(routing: &mut RoutedPart, left_out: usize) {
    if left_out > 0 {
        routing.notes.push(format!(
            "{left_out} selected passages did not fit the reader's budget of {} tokens and were left out",
            routing.budget_tokens
        ));
    }
}

/// The reader's passages within `budget_chars`, and how many selected ones
/// did not fit. The first passage always goes in, shortened if it must.
pub fn reader_passages(
    units: &[Unit],
    trace: &RoutedPart,
    budget_chars: usize,
) -> (Vec<Passage>, usize) {
    let mut chosen: Vec<Passage> = Vec::new();
    let mut seen = BTreeSet::new();
    for (unit, route) in units.iter().zip(&trace.routes) {
        let candidates: Vec<Passage> = match (route.outcome, &unit.routable) {
            (RouteOutcome::Selected, Ok(doc)) => route
                .selected
                .iter()
                .filter_map(|&node| node_passage(unit, doc, node, &trace.retrieved))
                .collect(),
            (RouteOutcome::FellBack, _) => unit
                .retrieved
                .iter()
                .filter_map(|n| trace.retrieved.iter().find(|p| p.number == *n).cloned())
                .collect(),
            _ => Vec::new(),
        };
        for p in candidates {
            if seen.insert((p.path.clone(), p.span_start, p.span_end, p.page)) {
                chosen.push(p);
            }
        }
    }
    let mut used = 0;
    let mut passages = Vec::new();
    for mut p in chosen.iter().cloned() {
        let size = p.text.chars().count();
        if used + size > budget_chars {
            if !passages.is_empty() {
                break;
            }
            p.text = shortened(&p.text, budget_chars).0;
        }
        used += size;
        p.number = passages.len() + 1;
        passages.push(p);
    }
    let left_out = chosen.len() - passages.len();
    (passages, left_out)
}

fn node_passage(
    unit: &Unit,
    doc: &Routable,
    node: usize,
    retrieved: &[Passage],
) -> Option<Passage> {
    let n = doc.tree.node(node);
    if n.text.trim().is_empty() {
        return None;
    }
    let chunk_id = doc.node_chunk.get(&node).copied().unwrap_or_default();
    let page = n.span.page.map(i64::from);
    let chunk = retrieved.iter().find(|p| p.chunk_id == chunk_id);
    let score = chunk.map_or(0.0, |p| p.score);
    // The chunk's OCR confidence is its page's; a node on another page of
    // the same chunk is not vouched for by it.
    let ocr = chunk.filter(|p| p.page == page).and_then(|p| p.ocr);
    Some(Passage {
        number: 0,
        chunk_id,
        path: unit.path.clone(),
        heading_path: n
            .parent
            .map(|p| doc.tree.heading_label(p))
            .unwrap_or_default(),
        span_start: n.span.start as i64,
        span_end: n.span.end as i64,
        page,
        ocr,
        score,
        suspected_instructions: suspected_instructions(&n.text),
        rows: n
            .table
            .and_then(|shape| table::rows_in(&n.text, shape, 0, n.text.len())),
        text: n.text.clone(),
    })
}
