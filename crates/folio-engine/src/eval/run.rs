//! Answering every question with every method spec, questions outer, so an
//! interrupted evaluation has compared all specs on the questions it reached
//! rather than some specs on all questions. Each answer goes through
//! [`Library::ask`] exactly as `folio ask` does (stored as a run, with the
//! configured model); a failing question becomes a row and the rest go on.
//! A resumed evaluation keeps that order for the answers it still needs.
//! With a concurrency above 1, that many answers are in flight at once
//! (a server answering several requests in parallel gains from it; the
//! embedded model serves one at a time), and rows are written as they finish.
//! A conversation's turns are asked in order for each spec, each in the
//! thread of the turn before (a [`Chain`]); chains run side by side like
//! single questions do.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::dataset::Question;
use super::error::Result;
use super::results::{ResultsFile, Row};
use super::spec::MethodSpec;
use crate::library::Library;
use folio_methods::runner::AskSettings;
use folio_methods::EventSink;
use folio_store::{RunStatus, Scope};

/// Where the answering is, for progress displays. `done` counts answers
/// given, earlier runs' included, out of `total` (questions × specs).
#[derive(Debug, Clone, Copy)]
pub enum AnswerStep<'a> {
    Asking {
        question: &'a Question,
        spec: &'a MethodSpec,
    },
    Answered {
        done: usize,
        total: usize,
        row: &'a Row,
    },
}

/// The answers an evaluation still needs, in order: every (question, spec)
/// pair without a row from an earlier run, as indices into the two lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remaining {
    pub pairs: Vec<(usize, usize)>,
    /// The same pairs as chains to ask in order.
    pub chains: Vec<Chain>,
    /// Answers of the whole evaluation, given or not: questions × specs.
    pub total: usize,
}

/// Answers asked one after another: a conversation's remaining turns for
/// one spec, each following up in the thread of the turn before, or one
/// question alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub pairs: Vec<(usize, usize)>,
    /// The conversation's latest turn that an earlier run of the
    /// evaluation answered before this chain's first, as (run id, question
    /// index): the chain goes on in that run's thread.
    pub after: Option<(i64, usize)>,
}

impl Remaining {
    pub fn new(questions: &[Question], specs: &[MethodSpec], earlier: &[Row]) -> Remaining {
        let answered: HashSet<(&str, &str)> = earlier
            .iter()
            .map(|r| (r.question_id.as_str(), r.spec.as_str()))
            .collect();
        let spec_texts: Vec<String> = specs.iter().map(ToString::to_string).collect();
        let pairs: Vec<(usize, usize)> = (0..questions.len())
            .flat_map(|q| (0..specs.len()).map(move |s| (q, s)))
            .filter(|&(q, s)| {
                !answered.contains(&(questions[q].id.as_str(), spec_texts[s].as_str()))
            })
            .collect();
        let chains = chains(questions, &spec_texts, &pairs, earlier);
        Remaining {
            pairs,
            chains,
            total: questions.len() * specs.len(),
        }
    }

    /// Answers earlier runs already gave.
    pub fn done(&self) -> usize {
        self.total - self.pairs.len()
    }
}

/// `pairs` grouped into chains, in the order each chain's first pair comes.
fn chains(
    questions: &[Question],
    specs: &[String],
    pairs: &[(usize, usize)],
    earlier: &[Row],
) -> Vec<Chain> {
    let by_id: HashMap<&str, usize> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    // The latest earlier turn with a run, before `number`, of `conversation` for `spec`.
    let resumed = |conversation: &str, spec: &str, number: usize| {
        earlier
            .iter()
            .filter(|r| r.spec == spec)
            .filter_map(|r| {
                let index = *by_id.get(r.question_id.as_str())?;
                let turn = questions[index].turn.as_ref()?;
                (turn.conversation == conversation && turn.number < number).then_some((
                    turn.number,
                    r.run_id?,
                    index,
                ))
            })
            .max()
            .map(|(_, run, index)| (run, index))
    };
    let mut chains: Vec<Chain> = Vec::new();
    let mut open: HashMap<(&str, usize), usize> = HashMap::new();
    for &(q, s) in pairs {
        let Some(turn) = &questions[q].turn else {
            chains.push(Chain {
                pairs: vec![(q, s)],
                after: None,
            });
            continue;
        };
        match open.get(&(turn.conversation.as_str(), s)) {
            Some(&i) => chains[i].pairs.push((q, s)),
            None => {
                open.insert((turn.conversation.as_str(), s), chains.len());
                chains.push(Chain {
                    pairs: vec![(q, s)],
                    after: resumed(&turn.conversation, &specs[s], turn.number),
                });
            }
        }
    }
    chains
}

pub struct Answered {
    /// This run's rows, in the order they finished.
    pub rows: Vec<Row>,
    /// Cancelled before every question was answered; answers in progress
    /// are not among the rows.
    pub interrupted: bool,
}

/// What to answer and how.
pub struct Batch<'a> {
    pub questions: &'a [Question],
    pub specs: &'a [MethodSpec],
    pub remaining: &'a Remaining,
    pub settings: AskSettings,
    /// What every question draws from (of the evaluation's own index).
    pub scope: &'a Scope,
    /// Answers in flight at once; at least 1.
    pub concurrency: usize,
}

/// Gives the remaining answers, each row written to `results` as it comes.
pub async fn answer_all(
    library: &Library,
    batch: Batch<'_>,
    cancel: &CancellationToken,
    results: &mut ResultsFile,
    progress: &(dyn Fn(AnswerStep<'_>) + Sync),
) -> Result<Answered> {
    let Batch {
        questions,
        specs,
        remaining,
        settings,
        scope,
        concurrency,
    } = batch;
    let asking = Asking {
        library,
        questions,
        specs,
        settings,
        scope,
        cancel,
        progress,
    };
    let chains: Vec<RowStream<'_>> = remaining
        .chains
        .iter()
        .map(|chain| Box::pin(chain_rows(&asking, chain)) as RowStream<'_>)
        .collect();
    let mut answers = futures::stream::iter(chains).flatten_unordered(concurrency.max(1));
    let mut rows = Vec::with_capacity(remaining.pairs.len());
    let mut interrupted = false;
    while let Some(row) = answers.next().await {
        let Some(row) = row else {
            interrupted = true;
            continue;
        };
        results.append(&row)?;
        progress(AnswerStep::Answered {
            done: remaining.done() + rows.len() + 1,
            total: remaining.total,
            row: &row,
        });
        rows.push(row);
    }
    Ok(Answered { rows, interrupted })
}

type RowStream<'a> = std::pin::Pin<Box<dyn futures::Stream<Item = Option<Row>> + Send + 'a>>;

/// What every answer of a batch shares.
struct Asking<'a> {
    library: &'a Library,
    questions: &'a [Question],
    specs: &'a [MethodSpec],
    settings: AskSettings,
    scope: &'a Scope,
    cancel: &'a CancellationToken,
    progress: &'a (dyn Fn(AnswerStep<'_>) + Sync),
}

/// One chain's rows, in order: `None` for an answer the cancel stopped,
/// which ends the chain.
fn chain_rows<'a>(
    asking: &'a Asking<'a>,
    chain: &'a Chain,
) -> impl futures::Stream<Item = Option<Row>> + 'a {
    futures::stream::unfold(
        (0usize, None::<i64>),
        move |(next, mut thread)| async move {
            let &(q, s) = chain.pairs.get(next)?;
            let (question, spec) = (&asking.questions[q], &asking.specs[s]);
            let stopped = Some((None, (chain.pairs.len(), None)));
            if asking.cancel.is_cancelled() {
                return stopped;
            }
            if let (0, Some((run, earlier))) = (next, chain.after) {
                // An index rebuilt under kept rows may hold another run by that id.
                let asked = &asking.questions[earlier].question;
                thread = asking
                    .library
                    .runs()
                    .get(run)
                    .await
                    .ok()
                    .filter(|r| &r.question == asked)
                    .map(|r| r.thread_id);
            }
            (asking.progress)(AnswerStep::Asking { question, spec });
            let mut request = spec.request(&question.question, asking.settings);
            request.thread = thread.filter(|_| question.turn.is_some());
            request.scope = asking.scope.clone();
            let started = Instant::now();
            let run = asking
                .library
                .ask(&request, &EventSink::default(), asking.cancel)
                .await;
            let wall_ms = started.elapsed().as_millis() as u64;
            let row = match run {
                Ok(run) if run.status == RunStatus::Cancelled => return stopped,
                Ok(run) => {
                    thread = Some(run.thread_id);
                    Row::answered(question, spec, &run, wall_ms)
                }
                Err(e) => Row::failed(question, spec, &e, wall_ms),
            };
            Some((Some(row), (next + 1, thread)))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Supporting;

    #[test]
    fn remaining_answers_keep_questions_outer_and_skip_earlier_rows() {
        let questions: Vec<Question> = ["q1", "q2"]
            .iter()
            .map(|id| Question {
                id: id.to_string(),
                question: "Who?".into(),
                answers: vec!["Ann".into()],
                supporting: Supporting::Unknown,
                turn: None,
            })
            .collect();
        let mut questions = questions;
        for (i, id) in ["c/1", "c/2", "c/3"].iter().enumerate() {
            questions.push(Question {
                id: id.to_string(),
                question: "And then?".into(),
                answers: vec!["Ann".into()],
                supporting: Supporting::Unknown,
                turn: Some(crate::eval::dataset::TurnOf {
                    conversation: "c".into(),
                    number: i + 1,
                    of: 3,
                }),
            });
        }
        let specs: Vec<MethodSpec> = ["llm-only", "vanilla-rag"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let error = crate::Error::Task("boom".into());
        let mut first_turn = Row::failed(&questions[2], &specs[0], &error, 1);
        first_turn.run_id = Some(41);
        let earlier = [
            Row::failed(&questions[0], &specs[0], &error, 1),
            Row::failed(&questions[1], &specs[0], &error, 1),
            first_turn,
        ];
        let remaining = Remaining::new(&questions, &specs, &earlier);
        assert_eq!(
            remaining.pairs,
            [(0, 1), (1, 1), (2, 1), (3, 0), (3, 1), (4, 0), (4, 1)],
            "vanilla-rag for q1, then q2, then the conversation's turns"
        );
        assert_eq!((remaining.done(), remaining.total), (3, 10));
        let chain = |pairs: &[(usize, usize)], after| Chain {
            pairs: pairs.to_vec(),
            after,
        };
        assert_eq!(
            remaining.chains,
            [
                chain(&[(0, 1)], None),
                chain(&[(1, 1)], None),
                chain(&[(2, 1), (3, 1), (4, 1)], None),
                chain(&[(3, 0), (4, 0)], Some((41, 2))),
            ],
            "llm-only goes on in the thread of the turn it answered before"
        );
    }
}
