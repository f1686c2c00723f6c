//! The information-gain graph an evaluation's `ig2rag` specs (and specs
//! over `retriever=ig2rag`) walk. Scoring
//! a whole corpus costs one model call per chunk (8,094 for the HotpotQA
//! corpus), so an evaluation scores only the chunks its questions reach:
//! the `reach` nearest to each question. Their neighbours still become edge
//! targets, but have no out-edges of their own; the summary records the
//! scope, so a reader knows the graph is partial.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::dataset::Question;
use super::spec::MethodSpec;
use crate::library::Library;
use folio_core::choice::Choice;
use folio_index::graph::{BuildProgress, Rubric, RubricStatus};
use folio_methods::ig2rag::WalkSettings;
use folio_methods::{RetrieverKind, RETRIEVER};

/// Chunks nearest each question that are scored: the seeds (h = 5 by
/// default) and as many again.
pub const DEFAULT_REACH: usize = 10;

/// The graph an evaluation walked and what building it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct GraphScope {
    pub reach: usize,
    /// Distinct chunks among the questions' `reach` nearest.
    pub chunks: usize,
    /// The graph in the evaluation's index afterwards, earlier runs'
    /// scoring included.
    pub status: RubricStatus,
    /// This run's scoring alone.
    pub this_run: BuildProgress,
}

/// The rubrics whose graphs the specs walk, each once, in spec order:
/// iG²RAG's, and the paper's rubric for a method over `retriever=ig2rag`.
pub fn rubrics_walked(specs: &[MethodSpec]) -> Vec<Rubric> {
    let mut rubrics = Vec::new();
    for spec in specs {
        let rubric = if spec.method == "ig2rag" {
            spec.options
                .get("rubric")
                .and_then(|r| Rubric::parse(r).ok())
                .unwrap_or_default()
        } else if spec.options.get(RETRIEVER.name).map(String::as_str)
            == Some(RetrieverKind::Ig2rag.as_str())
        {
            WalkSettings::PAPER.rubric
        } else {
            continue;
        };
        if !rubrics.contains(&rubric) {
            rubrics.push(rubric);
        }
    }
    rubrics
}

/// The chunks among the `reach` nearest to any of the questions.
pub async fn reached_chunks(
    library: &Library,
    questions: &[Question],
    reach: usize,
) -> crate::Result<HashSet<i64>> {
    let mut chunks = HashSet::new();
    for question in questions {
        let nearest = library
            .retrieval
            .nearest(&question.question, reach, None)
            .await?;
        chunks.extend(nearest.into_iter().map(|(id, _)| id));
    }
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_walked_rubric_once_and_nothing_for_other_methods() {
        let specs: Vec<MethodSpec> = [
            "vanilla-rag",
            "ig2rag",
            "ig2rag:variant=sim-ppr",
            "ig2rag:rubric=binary",
            "pager:retriever=ig2rag",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        assert_eq!(rubrics_walked(&specs), [Rubric::Coarse, Rubric::Binary]);
        assert!(rubrics_walked(&specs[..1]).is_empty());
        assert_eq!(rubrics_walked(&specs[4..]), [Rubric::Coarse]);
    }
}
