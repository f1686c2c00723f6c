//! Calibrating the sufficiency check for a model (`folio models
//! calibrate`). Every probe is a made-up subject (so no model knows it
//! beforehand) with a step asked twice: once with knowledge that holds the
//! answer and once with knowledge about the same subject that does not.
//! The model answers each exactly as CRP-RAG's check does (the same prompt,
//! greedy, the same token cap), and the threshold that best separates the
//! two sets of perplexities becomes the model's.

use super::prompts;
use minijinja::context;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::sufficiency::{check_options, perplexity};
use folio_llm::calibration::{held_out_accuracy, separate, Calibration};
use folio_llm::prompts::{as_document_data, PromptError, Prompts};
use folio_llm::{ChatRequest, Llm, LlmError};

/// One made-up subject, a step about it, and knowledge with and without
/// the answer.
#[derive(Debug, Deserialize)]
struct Probe {
    step: String,
    known: String,
    unknown: String,
}

const PROBES: &str = include_str!("probes.json");

#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("{model} gives no log-probabilities, so there is nothing to calibrate: CRP-RAG checks steps on it by the model's own yes/no assessment, which needs no threshold")]
    NoLogprobs { model: String },
    #[error("the probe \"{step}\" got an answer with no tokens to measure; check that the model answers at all with `folio models`")]
    NothingMeasured { step: String },
    #[error("the model failed on a probe: {0}")]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// How many answers a calibration asks for: two per probe.
pub fn probe_count() -> usize {
    2 * probes().len()
}

fn probes() -> Vec<Probe> {
    serde_json::from_str(PROBES).expect("the built-in probe set is valid JSON")
}

/// Measures `llm` on the probe set; `progress` hears each answer as
/// `(done, total)`. The result is not stored: the caller saves it.
pub async fn calibrate(
    llm: &dyn Llm,
    prompts: &Prompts,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &CancellationToken,
) -> Result<Calibration, CalibrateError> {
    if !llm.capabilities().logprobs {
        return Err(CalibrateError::NoLogprobs {
            model: llm.info().model,
        });
    }
    let options = check_options(&Default::default());
    let total = probe_count();
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for (i, probe) in probes().iter().enumerate() {
        for (holds_it, knowledge) in [(true, &probe.known), (false, &probe.unknown)] {
            let vars = context!(step => probe.step, knowledge => as_document_data(knowledge));
            let messages = prompts.messages(&prompts::CHECK, vars)?;
            let completion = llm
                .chat(ChatRequest {
                    messages: &messages,
                    options: &options,
                    on_token: None,
                    cancel,
                })
                .await?;
            let measured = completion
                .logprobs
                .as_deref()
                .and_then(perplexity)
                .ok_or_else(|| CalibrateError::NothingMeasured {
                    step: probe.step.clone(),
                })?;
            if holds_it {
                known.push(measured);
            } else {
                unknown.push(measured);
            }
            progress(2 * i + usize::from(!holds_it) + 1, total);
        }
    }
    let (threshold, accuracy) =
        separate(&known, &unknown).expect("the probe set has answers of both kinds");
    Ok(Calibration {
        threshold,
        accuracy,
        held_out_accuracy: held_out_accuracy(&known, &unknown)
            .expect("the probe set has more than one probe"),
        known,
        unknown,
        measured_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{says_surely, ScriptedLlm};

    #[test]
    fn the_probe_set_pairs_every_step_with_knowledge_both_ways() {
        let probes = probes();
        assert!(probes.len() >= 10);
        for p in &probes {
            assert!(p.known != p.unknown && !p.step.is_empty(), "{p:?}");
        }
    }

    #[tokio::test]
    async fn a_model_surer_with_the_answer_in_hand_is_separated() {
        let sure = (0.9f32).ln();
        let unsure = (0.3f32).ln();
        let script = (0..probe_count())
            .map(|i| {
                let p = if i % 2 == 0 { sure } else { unsure };
                says_surely("An answer.", &[p, p])
            })
            .collect();
        let llm = ScriptedLlm::new(script).with_logprobs();
        let prompts = Prompts::load(None, &[&prompts::CHECK]).unwrap();
        let heard = std::sync::Mutex::new(Vec::new());
        let progress = |done, total| heard.lock().unwrap().push((done, total));
        let measured = calibrate(&llm, &prompts, &progress, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(measured.accuracy, 1.0);
        assert!(measured.threshold > 1.0 / 0.9 && measured.threshold < 1.0 / 0.3);
        assert_eq!(measured.known.len(), probes().len());
        let heard = heard.into_inner().unwrap();
        assert_eq!(heard.last(), Some(&(probe_count(), probe_count())));
        let prompts = llm.prompts();
        assert!(prompts[0].contains("Hallbeck") && !prompts[1].contains("Hallbeck"));
    }

    #[tokio::test]
    async fn a_backend_without_log_probabilities_is_told_why_it_needs_no_threshold() {
        let llm = ScriptedLlm::new(Vec::new());
        let prompts = Prompts::load(None, &[&prompts::CHECK]).unwrap();
        let err = calibrate(&llm, &prompts, &|_, _| {}, &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(matches!(err, CalibrateError::NoLogprobs { .. }));
        assert!(err
            .to_string()
            .ends_with("yes/no assessment, which needs no threshold"));
    }
}
