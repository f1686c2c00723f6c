//! The optional LLM-as-judge metric: a model reads the question, the gold
//! answers and a method's answer, and says whether the answer gives a gold
//! one. String metrics miss a right answer worded differently ("the 1950s"
//! against "1950s decade"); a judge catches those, but it is a model's
//! opinion, wrong in its own ways, so the summary labels it as such and it
//! runs only when asked for.
//!
//! Verdicts go to `judgements.jsonl`, one line per answer and judge, apart
//! from the answers: judging an evaluation later, or with another judge,
//! never touches `results.jsonl`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use minijinja::context;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::dataset::Question;
use super::manifest::ModelId;
use super::results::Row;
use crate::library::Library;
use folio_llm::prompts::{Prompt, Prompts};
use folio_llm::verdict::{verdict, verdict_schema, VERDICT_GRAMMAR};
use folio_llm::{GenerateOptions, Llm};
use folio_store::RunStatus;

/// Enough for the verdict and its reason in a few words.
const JUDGE_MAX_TOKENS: u32 = 64;

/// The judge's prompt: the question, the gold answers and the answer to grade.
pub static JUDGE: Prompt = folio_llm::prompt!("eval/judge.j2", ["question", "golds", "answer"]);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub question_id: String,
    pub spec: String,
    /// The judging model, as [`ModelId`] writes it.
    pub judge: String,
    /// `None` when the reply said neither yes nor no, or the call failed;
    /// the summary counts those as no.
    pub verdict: Option<bool>,
    /// The judge's reply, or why there is none.
    pub reply: String,
}

pub struct Judge {
    llm: Arc<dyn Llm>,
    prompts: Arc<Prompts>,
    name: String,
    timeout: Duration,
}

impl Judge {
    /// The `[judge]` model of `folio.toml`, or the library's own model when
    /// there is none (loaded once, not twice).
    pub async fn open(library: &Library) -> crate::Result<Judge> {
        let config = library.config();
        let (llm, settings) = match &config.judge {
            Some(judge) => (folio_llm::connect(judge).await?, judge),
            None => (library.llm().await?, &config.llm),
        };
        Ok(Judge {
            llm,
            prompts: library.prompts().await?,
            name: ModelId::from(settings).to_string(),
            timeout: Duration::from_secs(settings.timeout_secs),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Judges `row`'s answer to `question`. A run that gave no answer, or
    /// failed, is judged no without asking.
    pub async fn judge(
        &self,
        question: &Question,
        row: &Row,
        cancel: &CancellationToken,
    ) -> Judgement {
        let (verdict, reply) = match (&row.status, &row.answer) {
            (RunStatus::Done, Some(answer)) => match self.ask(question, answer, cancel).await {
                Ok(reply) => (verdict(&reply), reply),
                Err(e) => (None, format!("the judge failed: {e}")),
            },
            _ => (Some(false), "no answer to judge".to_string()),
        };
        Judgement {
            question_id: row.question_id.clone(),
            spec: row.spec.clone(),
            judge: self.name.clone(),
            verdict,
            reply,
        }
    }

    async fn ask(
        &self,
        question: &Question,
        answer: &str,
        cancel: &CancellationToken,
    ) -> crate::Result<String> {
        let vars = context!(
            question => question.question,
            golds => question.answers,
            answer,
        );
        let messages = self.prompts.messages(&JUDGE, vars)?;
        let options = GenerateOptions {
            max_tokens: JUDGE_MAX_TOKENS,
            temperature: 0.0,
            grammar: Some(VERDICT_GRAMMAR.to_string()),
            schema: Some(verdict_schema()),
            timeout: self.timeout,
            ..GenerateOptions::default()
        };
        let completion = folio_llm::reply(&*self.llm, &messages, &options, cancel).await?;
        Ok(completion.text.trim().to_string())
    }
}

/// Judges `rows` that `earlier` has no verdict from `judge` for, appending
/// each verdict as it comes; `progress` gets (judged, to judge).
pub async fn judge_all(
    judge: &Judge,
    questions: &[Question],
    rows: &[Row],
    earlier: &[Judgement],
    file: &mut super::results::ResultsFile<Judgement>,
    cancel: &CancellationToken,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> super::Result<Vec<Judgement>> {
    let judged_before: HashSet<(&str, &str)> = earlier
        .iter()
        .filter(|j| j.judge == judge.name)
        .map(|j| (j.question_id.as_str(), j.spec.as_str()))
        .collect();
    let by_id: HashMap<&str, &Question> = questions.iter().map(|q| (q.id.as_str(), q)).collect();
    let pending: Vec<&Row> = rows
        .iter()
        .filter(|r| !judged_before.contains(&(r.question_id.as_str(), r.spec.as_str())))
        .collect();
    let mut judged = Vec::with_capacity(pending.len());
    for row in &pending {
        if cancel.is_cancelled() {
            break;
        }
        let Some(&question) = by_id.get(row.question_id.as_str()) else {
            continue;
        };
        let judgement = judge.judge(question, row, cancel).await;
        if cancel.is_cancelled() {
            break;
        }
        file.append(&judgement)?;
        judged.push(judgement);
        progress(judged.len(), pending.len());
    }
    Ok(judged)
}
