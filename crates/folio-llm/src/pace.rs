//! How fast a model answers on this machine, measured rather than guessed:
//! one fixed request (a passage to read, a short reply to write) timed from
//! the request to its first token (reading the prompt) and from there to
//! the last (writing). From the two rates, the seconds a typical question
//! takes: what `folio models` and the app's first start tell a person
//! before they ask.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{ChatMessage, ChatRequest, GenerateOptions, Llm, Result};

/// A vanilla-rag question at k 5 on the rust-book sample: "How do I make a
/// variable mutable?" sent the default model 1,040 prompt tokens; a short
/// paragraph of answer, with its citations, is about 60 tokens.
pub const TYPICAL_PROMPT_TOKENS: u32 = 1_000;
pub const TYPICAL_ANSWER_TOKENS: u32 = 60;

/// Tokens the probe asks to write: enough to time writing, few enough
/// that the probe takes seconds on the slowest kit model.
const PROBE_REPLY_TOKENS: u32 = 40;

/// The probe's passage, about 330 tokens: long enough that reading it
/// dominates the time to the first token.
const PROBE_PASSAGE: &str = "\
A lighthouse keeper's log from a small island records the weather at dawn, \
noon and dusk for eleven years. The entries are short: wind direction, the \
height of the swell, whether the lamp needed trimming, and the ships that \
passed. Storms arrive most often in the second half of autumn, when the \
wind turns from the south-west to the north-west within a single night. In \
winter the keeper notes ice on the gallery rail and the days the supply \
boat could not land. Spring entries are longer, with birds returning to \
the cliffs and the first fishing boats working the banks to the east. The \
summer pages list visitors: a surveyor measuring the tides, a painter who \
stayed nine days, and a schoolteacher who came every August with her \
class. Across the years the lamp changes from oil to paraffin, and the log \
records the new burner's brighter flame and the longer hours it needed \
cleaning. Near the end the handwriting changes too: an assistant keeper \
takes over the dusk entries, and then the dawn ones. The last page notes \
the automatic light being installed, the final trimming of the old lamp, \
and the boat that carried the keeper's belongings to the mainland on a \
calm morning with the wind from the east. The log was later given to the \
harbour museum, where its pages on the great storm of the eighth year are \
shown beside the lens that survived it.";

/// A model's measured reading and writing rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Pace {
    /// Prompt tokens read a second.
    pub prompt_tokens_per_s: f64,
    /// Tokens written a second.
    pub tokens_per_s: f64,
    /// The seconds a typical question takes at these rates
    /// ([`TYPICAL_PROMPT_TOKENS`] read, [`TYPICAL_ANSWER_TOKENS`] written).
    pub seconds_per_question: f64,
}

impl Pace {
    fn from_rates(prompt_tokens_per_s: f64, tokens_per_s: f64) -> Pace {
        Pace {
            prompt_tokens_per_s,
            tokens_per_s,
            seconds_per_question: f64::from(TYPICAL_PROMPT_TOKENS) / prompt_tokens_per_s
                + f64::from(TYPICAL_ANSWER_TOKENS) / tokens_per_s,
        }
    }
}

/// Times the probe request on `llm`. A backend that reports no token
/// counts is timed on the counts it reports (none: an error).
pub async fn measure(llm: &dyn Llm, cancel: &CancellationToken) -> Result<Pace> {
    let messages = [ChatMessage::user(format!(
        "{PROBE_PASSAGE}\n\nList the things the keeper's log records, one per line."
    ))];
    let options = GenerateOptions {
        max_tokens: PROBE_REPLY_TOKENS,
        temperature: 0.0,
        ..GenerateOptions::default()
    };
    let first_token: Mutex<Option<Instant>> = Mutex::new(None);
    let on_token = |_: &str| {
        if let Ok(mut first) = first_token.lock() {
            first.get_or_insert_with(Instant::now);
        }
    };
    let started = Instant::now();
    let completion = llm
        .chat(ChatRequest {
            messages: &messages,
            options: &options,
            on_token: Some(&on_token),
            cancel,
        })
        .await?;
    let ended = Instant::now();
    let first = first_token.into_inner().ok().flatten().unwrap_or(ended);
    let reading = first.duration_since(started).max(Duration::from_millis(1));
    let writing = ended.duration_since(first).max(Duration::from_millis(1));
    let usage = completion.usage;
    // The first token's time is counted with the reading.
    let written = usage.completion_tokens.saturating_sub(1).max(1);
    Ok(Pace::from_rates(
        f64::from(usage.prompt_tokens.max(1)) / reading.as_secs_f64(),
        f64::from(written) / writing.as_secs_f64(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typical_question_adds_reading_and_writing() {
        let pace = Pace::from_rates(100.0, 12.0);
        assert!((pace.seconds_per_question - (10.0 + 5.0)).abs() < 1e-9);
    }
}
