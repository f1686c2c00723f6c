//! What a method may use while it runs: the retrieval service, the
//! language model (every call counted and timed), prompts, the event sink
//! and cancellation. The context also keeps the method's latest trace, so a
//! run that fails halfway still shows how far it got.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::citations::{cited_numbers, only_markers, resolve};
use super::injection::suspected_instructions;
use super::markers::{with_marker_stops, without_markers};
use super::retrievers::{gather, RetrievalPart, RetrieverKind};
use super::{Citation, MethodError, Params, Passage, RunEvent, Trace};
use folio_documents::loaders::ocr::OcrMark;
use folio_llm::calibration::Calibration;
use folio_llm::prompts::{Prompt, Prompts};
use folio_llm::rubric::Rubric;
use folio_llm::{ChatMessage, ChatRequest, Completion, FinishReason, GenerateOptions, Llm};
use folio_retrieve::{DocumentParts, Ranker, Ranking, RetrievalService, RetrieveError, SearchMode};
use folio_store::{CutOff, DocumentSet, LinkedChunk, LlmCallRow, RubricStatus, StoredChunk};

/// The request that follows a reply of citation markers alone: the model
/// took "end each sentence with its number" for the answer's form.
pub(super) static RESTATE: Prompt = folio_llm::prompt!("restate.j2", []);

pub struct CitedAnswer {
    pub text: String,
    pub citations: Vec<Citation>,
    /// Markers that name no passage, for the trace.
    pub unknown: Vec<usize>,
    /// Set when the answer reached `max_tokens` before it finished.
    pub cut_off: Option<CutOff>,
}

/// Where a run's events go; a closed or absent receiver is not an error,
/// because nobody has to watch a run.
#[derive(Clone, Default)]
pub struct EventSink(Option<UnboundedSender<RunEvent>>);

impl EventSink {
    pub fn new(sender: UnboundedSender<RunEvent>) -> EventSink {
        EventSink(Some(sender))
    }

    pub fn emit(&self, event: RunEvent) {
        if let Some(sender) = &self.0 {
            let _ = sender.send(event);
        }
    }
}

#[cfg(any(test, feature = "testing"))]
impl EventSink {
    /// What `run` returns beside every event it emitted into the sink it is given.
    pub async fn recording<T>(run: impl AsyncFnOnce(&EventSink) -> T) -> (T, Vec<RunEvent>) {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let value = run(&EventSink::new(sender)).await;
        let mut events = Vec::new();
        while let Ok(e) = receiver.try_recv() {
            events.push(e);
        }
        (value, events)
    }
}

pub struct MethodContext<'a> {
    retrieval: &'a RetrievalService,
    /// How [`MethodContext::retrieve`] finds passages: the run's
    /// `retriever` option.
    retriever: RetrieverKind,
    /// How the retriever found each query's passages, when it is more than
    /// a search; the trace shows them beside the method's own steps.
    parts: Mutex<Vec<RetrievalPart>>,
    /// The documents the question is restricted to; `None` for the whole
    /// library. Every retrieval of the run stays inside it.
    scope: Option<DocumentSet>,
    pub cancel: &'a CancellationToken,
    llm: &'a dyn Llm,
    prompts: &'a Prompts,
    events: &'a EventSink,
    timeout: Duration,
    /// Whether the model calls ask to start from kept prompts.
    reuse_prefix: bool,
    /// A thread's earlier turns, shown to the steps that write the answer.
    earlier: Vec<ChatMessage>,
    /// The model's calibrated sufficiency threshold, if it was measured,
    /// or why the calibrations could not be read.
    calibration: Result<Option<Calibration>, String>,
    calls: Mutex<Vec<LlmCallRow>>,
    trace: Mutex<Option<Trace>>,
    retrieval_ms: AtomicU64,
    llm_busy: Mutex<Busy>,
}

/// Time with at least one model call in flight. Calls can overlap (routes
/// and slots run in parallel), so summing their wall times would count the
/// same seconds twice.
#[derive(Default)]
struct Busy {
    in_flight: usize,
    since: Option<Instant>,
    total: Duration,
}

/// One call in flight; ends when dropped, so a call abandoned midway (a
/// parallel sibling failed) still stops the clock.
struct InFlight<'a>(&'a Mutex<Busy>);

impl<'a> InFlight<'a> {
    fn start(busy: &'a Mutex<Busy>) -> InFlight<'a> {
        if let Ok(mut b) = busy.lock() {
            if b.in_flight == 0 {
                b.since = Some(Instant::now());
            }
            b.in_flight += 1;
        }
        InFlight(busy)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Ok(mut b) = self.0.lock() {
            b.in_flight = b.in_flight.saturating_sub(1);
            if b.in_flight == 0 {
                if let Some(since) = b.since.take() {
                    b.total += since.elapsed();
                }
            }
        }
    }
}

/// What the runner keeps from a context once the method returns.
pub(super) struct Recorded {
    pub calls: Vec<LlmCallRow>,
    pub trace: Option<Trace>,
    pub retrieval_ms: u64,
    /// Wall time with a model call in flight.
    pub llm_ms: u64,
}

impl<'a> MethodContext<'a> {
    pub(super) fn new(
        retrieval: &'a RetrievalService,
        retriever: RetrieverKind,
        llm: &'a dyn Llm,
        prompts: &'a Prompts,
        events: &'a EventSink,
        cancel: &'a CancellationToken,
        timeout: Duration,
    ) -> Self {
        MethodContext {
            retrieval,
            retriever,
            parts: Mutex::new(Vec::new()),
            scope: None,
            cancel,
            llm,
            prompts,
            events,
            timeout,
            reuse_prefix: false,
            earlier: Vec::new(),
            calibration: Ok(None),
            calls: Mutex::new(Vec::new()),
            trace: Mutex::new(None),
            retrieval_ms: AtomicU64::new(0),
            llm_busy: Mutex::new(Busy::default()),
        }
    }

    /// Lets every model call start from the prefix it shares with a kept
    /// prompt (`reuse_prefix` in the settings).
    pub(super) fn with_prefix_reuse(mut self, reuse: bool) -> Self {
        self.reuse_prefix = reuse;
        self
    }

    /// Shows `earlier` (a thread's turns as chat messages) to the steps
    /// that write the answer.
    pub(super) fn with_history(mut self, earlier: Vec<ChatMessage>) -> Self {
        self.earlier = earlier;
        self
    }

    /// Keeps every retrieval of the run inside `scope`'s documents.
    pub(super) fn with_scope(mut self, scope: Option<DocumentSet>) -> Self {
        self.scope = scope;
        self
    }

    pub(super) fn with_calibration(
        mut self,
        calibration: Result<Option<Calibration>, String>,
    ) -> Self {
        self.calibration = calibration;
        self
    }

    /// What `folio models calibrate` measured for the run's model, if it
    /// was: the sufficiency threshold a perplexity test uses. An unreadable
    /// calibrations file is the method's to note, not a failed run.
    pub fn calibration(&self) -> Result<Option<&Calibration>, &str> {
        self.calibration
            .as_ref()
            .map(Option::as_ref)
            .map_err(String::as_str)
    }

    pub fn emit(&self, event: RunEvent) {
        self.events.emit(event);
    }

    /// Records how far the method has got (stored if the run fails later)
    /// and shows it to whoever watches the run, with how the retriever found
    /// the passages so far.
    pub fn checkpoint(&self, trace: &Trace) {
        let trace = self.with_retrieval(trace.clone());
        if let Ok(mut slot) = self.trace.lock() {
            *slot = Some(trace.clone());
        }
        self.emit(RunEvent::Trace { trace });
    }

    /// `trace` with how the run's retriever found its passages.
    pub(super) fn with_retrieval(&self, mut trace: Trace) -> Trace {
        if let Ok(parts) = self.parts.lock() {
            trace.attach_retrieval(&parts);
        }
        trace
    }

    /// The `params.k` best chunks for `query` from the run's retriever,
    /// numbered from 1 as the prompt will show them.
    pub async fn retrieve(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<Vec<Passage>, MethodError> {
        let (passages, part) = gather(self, self.retriever, query, params).await?;
        if let (Some(part), Ok(mut parts)) = (part, self.parts.lock()) {
            parts.push(part);
        }
        Ok(passages)
    }

    /// The `k` best chunks for `query` by one search, numbered from 1.
    pub async fn search(
        &self,
        query: &str,
        k: usize,
        mode: SearchMode,
    ) -> Result<Vec<Passage>, MethodError> {
        let found = self
            .timed_retrieval(self.retrieval.retrieve(
                query,
                k,
                &Ranker::Search(mode),
                self.scope.as_ref(),
            ))
            .await?;
        let passages = numbered(found);
        self.emit(RunEvent::Retrieved {
            query: query.to_string(),
            passages: passages.len(),
        });
        Ok(passages)
    }

    /// The chunks `ranked` names, in that order and numbered from 1; chunks
    /// deleted since they were ranked are left out.
    pub async fn passages(
        &self,
        query: &str,
        ranked: &[(i64, f64)],
    ) -> Result<Vec<Passage>, MethodError> {
        let found = self
            .timed_retrieval(self.retrieval.scored_chunks(ranked))
            .await?;
        let passages = numbered(found);
        self.emit(RunEvent::Retrieved {
            query: query.to_string(),
            passages: passages.len(),
        });
        Ok(passages)
    }

    /// Chunk ids for `query` ranked by a retriever the method chose, with
    /// how a gain walk got there, for methods whose trace shows the ranking
    /// itself; [`MethodContext::retrieve`] is the usual way.
    pub async fn rank(
        &self,
        query: &str,
        k: usize,
        retriever: &Ranker,
    ) -> Result<Ranking, MethodError> {
        self.timed_retrieval(
            self.retrieval
                .rank(query, k, retriever, self.scope.as_ref()),
        )
        .await
    }

    /// The chunks the links written in chunk `chunk_id` lead to, within
    /// the run's scope.
    pub async fn linked(&self, chunk_id: i64) -> Result<Vec<LinkedChunk>, MethodError> {
        self.timed_retrieval(self.retrieval.linked(chunk_id, self.scope.as_ref()))
            .await
    }

    /// Unit vectors for `texts` from the embedding model, so a
    /// method can compare its own texts the way retrieval compares chunks.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MethodError> {
        self.timed_retrieval(self.retrieval.embed(texts)).await
    }

    /// "file › heading path" of each chunk, to name graph nodes by.
    pub async fn chunk_labels(
        &self,
        ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, String>, MethodError> {
        let chunks = self.timed_retrieval(self.retrieval.chunks(ids)).await?;
        Ok(chunks
            .into_iter()
            .map(|c| {
                let file = folio_core::path_text::shown_name(&c.path);
                let label = if c.heading_path.is_empty() {
                    file
                } else {
                    format!("{file} › {}", c.heading_path)
                };
                (c.id, label)
            })
            .collect())
    }

    /// How much of the index the graph of `rubric` covers.
    pub async fn graph_coverage(&self, rubric: Rubric) -> Result<RubricStatus, MethodError> {
        self.timed_retrieval(self.retrieval.graph_coverage(rubric))
            .await
    }

    /// The indexed document at `path` with its tree and chunks, for a method
    /// that routes through document structure; `None` once it is removed.
    pub async fn document(&self, path: &str) -> Result<Option<DocumentParts>, MethodError> {
        self.timed_retrieval(self.retrieval.document(path)).await
    }

    /// The documents the question is restricted to; `None` for the whole
    /// library.
    pub fn scoped_documents(&self) -> Option<&DocumentSet> {
        self.scope.as_ref()
    }

    /// The indexed document with this id, with its path, tree and chunks.
    pub async fn document_by_id(
        &self,
        id: i64,
    ) -> Result<Option<(String, DocumentParts)>, MethodError> {
        self.timed_retrieval(self.retrieval.document_by_id(id))
            .await
    }

    /// Summaries kept by earlier answers, by key (see `whole_document`).
    pub async fn cached_summaries(
        &self,
        keys: &[&str],
    ) -> Result<std::collections::HashMap<String, String>, MethodError> {
        self.timed_retrieval(self.retrieval.cached_summaries(keys))
            .await
    }

    /// Keeps a summary for later answers as soon as it is written.
    pub async fn keep_summary(&self, key: &str, summary: &str) -> Result<(), MethodError> {
        self.timed_retrieval(self.retrieval.keep_summary(key, summary))
            .await
    }

    /// The model's name, for keying what it writes.
    pub fn model_name(&self) -> String {
        self.llm.info().model
    }

    /// The model's context, in tokens.
    pub fn model_context(&self) -> u32 {
        self.llm.info().context_size
    }

    /// The templates a step is rendered from (see `Prompts::fingerprint`).
    pub fn prompt_fingerprint(&self, prompt: &'static Prompt) -> String {
        self.prompts.fingerprint(prompt)
    }

    /// Runs a retrieval step, counting its time as retrieval.
    async fn timed_retrieval<T>(
        &self,
        step: impl std::future::Future<Output = Result<T, RetrieveError>>,
    ) -> Result<T, MethodError> {
        let started = Instant::now();
        let result = step.await.map_err(MethodError::Retrieval);
        self.retrieval_ms
            .fetch_add(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        result
    }

    /// Renders the step's prompt and asks the model, with the run's
    /// generation settings.
    pub async fn generate(
        &self,
        step: &'static str,
        prompt: &'static Prompt,
        vars: impl Serialize,
        params: &Params,
    ) -> Result<Completion, MethodError> {
        self.generate_with(step, prompt, vars, &self.options(params))
            .await
    }

    /// The run's generation settings, for a step that changes some of them
    /// (samples, constrains its reply or wants log-probabilities).
    pub fn options(&self, params: &Params) -> GenerateOptions {
        GenerateOptions {
            max_tokens: params.max_tokens,
            temperature: params.temperature,
            sampling: params.sampling,
            seed: params.seed,
            timeout: self.timeout,
            // A method's calls share instructions; where the settings
            // allow, the embedded model starts each from what it kept.
            cache_prefix: self.reuse_prefix,
            ..GenerateOptions::default()
        }
    }

    /// Renders the step's prompt and asks the model with `options`. A step
    /// that writes the answer sees the thread's earlier turns before it,
    /// and stops at the prompts' document markers ([`super::markers::MARKER_STOPS`]).
    pub async fn generate_with(
        &self,
        step: &'static str,
        prompt: &'static Prompt,
        vars: impl Serialize,
        options: &GenerateOptions,
    ) -> Result<Completion, MethodError> {
        if !prompt.writes_the_answer {
            let messages = self.prompts.messages_after(&[], prompt, vars)?;
            return self.complete(step, &messages, options).await;
        }
        let messages = self.prompts.messages_after(&self.earlier, prompt, vars)?;
        self.complete(step, &messages, &self.answer_options(options))
            .await
    }

    /// `options` for a step that writes the answer: it stops at the
    /// prompts' document markers.
    fn answer_options(&self, options: &GenerateOptions) -> GenerateOptions {
        GenerateOptions {
            stop: with_marker_stops(options.stop.clone()),
            ..options.clone()
        }
    }

    /// The replies of `prompt`'s worked examples, to tell a reply that
    /// copies one from a reply that does the step.
    pub fn example_replies(&self, prompt: &'static Prompt) -> Vec<&str> {
        self.prompts.example_replies(prompt)
    }

    /// Whether the model reports log-probabilities, so a method can pick a
    /// test that needs them.
    pub fn llm_capabilities(&self) -> folio_llm::Capabilities {
        self.llm.capabilities()
    }

    /// The run's final step: a finished answer and the citations its `[n]`
    /// markers make to `passages`, with the markers that name none.
    ///
    /// A reply that is a citation marker alone ("[1]") is sent back once,
    /// in the same chat, with [`RESTATE`]'s request for the answer itself,
    /// under the same step so a front end streams it as the answer. The
    /// marker still counts as a citation if the restated answer has none.
    pub async fn cited_answer(
        &self,
        step: &'static str,
        prompt: &'static Prompt,
        vars: impl Serialize,
        params: &Params,
        passages: &[Passage],
    ) -> Result<CitedAnswer, MethodError> {
        let options = self.answer_options(&self.options(params));
        let mut messages = self.prompts.messages_after(&self.earlier, prompt, vars)?;
        let mut completion = self.complete(step, &messages, &options).await?;
        let mut cited_before = String::new();
        if only_markers(&completion.text) {
            cited_before = completion.text;
            messages.push(ChatMessage::assistant(cited_before.clone()));
            messages.push(self.prompts.user_message(&RESTATE, ())?);
            completion = self.complete(step, &messages, &options).await?;
        }
        let Written { text, cut_off } = answer_text(step, completion, params.max_tokens)?;
        let cited = if cited_numbers(&text).is_empty() {
            format!("{cited_before} {text}")
        } else {
            text.clone()
        };
        let (citations, unknown) = resolve(&cited, passages);
        Ok(CitedAnswer {
            text,
            citations,
            unknown,
            cut_off,
        })
    }

    /// One model call, streamed to the event sink and recorded whether it
    /// succeeds or not.
    pub async fn complete(
        &self,
        step: &'static str,
        messages: &[ChatMessage],
        options: &GenerateOptions,
    ) -> Result<Completion, MethodError> {
        self.emit(RunEvent::LlmStarted { step });
        let on_token = |text: &str| {
            self.emit(RunEvent::Token {
                step,
                text: text.to_string(),
            })
        };
        let started = Instant::now();
        let in_flight = InFlight::start(&self.llm_busy);
        let result = self
            .llm
            .chat(ChatRequest {
                messages,
                options,
                on_token: Some(&on_token),
                cancel: self.cancel,
            })
            .await;
        drop(in_flight);
        let wall_ms = started.elapsed().as_millis() as u64;
        let (usage, finish, error, shaping) = match &result {
            Ok(c) => (c.usage, Some(c.finish), None, c.shaping),
            Err(e) => (Default::default(), None, Some(e.to_string()), None),
        };
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(LlmCallRow {
                step: step.to_string(),
                prompt_tokens: usage.prompt_tokens.into(),
                cached_tokens: usage.cached_tokens.into(),
                completion_tokens: usage.completion_tokens.into(),
                wall_ms: wall_ms as i64,
                finish: finish.map(|f| f.as_str().to_string()),
                error,
                shaping,
            });
        }
        self.emit(RunEvent::LlmFinished {
            step,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            wall_ms,
        });
        result.map_err(|source| MethodError::Llm { step, source })
    }

    pub(super) fn into_recorded(self) -> Recorded {
        let llm_busy = self.llm_busy.into_inner().unwrap_or_default();
        Recorded {
            llm_ms: llm_busy.total.as_millis() as u64,
            calls: self.calls.into_inner().unwrap_or_default(),
            trace: self.trace.into_inner().unwrap_or_default(),
            retrieval_ms: self.retrieval_ms.into_inner(),
        }
    }
}

/// The text of an intermediate step's completion. A reply cut off at
/// `max_tokens` still carries what the next step needs, so it is kept and
/// the cut is noted for the trace; only an empty reply is an error.
pub fn partial_text(
    step: &'static str,
    completion: Completion,
    notes: &mut Vec<String>,
) -> Result<String, MethodError> {
    note_if_cut_off(step, &completion, notes);
    let text = completion.text.trim().to_string();
    if text.is_empty() {
        return Err(MethodError::EmptyOutput { step });
    }
    Ok(text)
}

pub fn note_if_cut_off(step: &str, completion: &Completion, notes: &mut Vec<String>) {
    if completion.finish == FinishReason::Length {
        notes.push(format!(
            "the {step} reply reached max_tokens; what it had written was used"
        ));
    }
}

/// What the step that writes a run's answer wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub text: String,
    /// Set when the reply reached `max_tokens` before it finished.
    pub cut_off: Option<CutOff>,
}

/// The text of the completion that writes a run's answer. A reply cut off
/// at `max_tokens` is still the answer, kept with a [`CutOff`] mark so a
/// person sees what was written and that it is unfinished; only an empty
/// reply is an error.
pub fn answer_text(
    step: &'static str,
    completion: Completion,
    max_tokens: u32,
) -> Result<Written, MethodError> {
    let text = without_markers(&completion.text);
    if text.is_empty() {
        return Err(match completion.finish {
            FinishReason::Length => MethodError::CutOff {
                step,
                max_tokens,
                partial: text,
            },
            FinishReason::Stop => MethodError::EmptyOutput { step },
        });
    }
    let cut_off = (completion.finish == FinishReason::Length).then(|| CutOff {
        step: step.to_string(),
        max_tokens,
    });
    Ok(Written { text, cut_off })
}

/// The text of a completion that an intermediate step needs whole: empty
/// or cut-off output is an error the run records.
pub fn finished_text(
    step: &'static str,
    completion: Completion,
    max_tokens: u32,
) -> Result<String, MethodError> {
    let text = without_markers(&completion.text);
    match completion.finish {
        FinishReason::Length => Err(MethodError::CutOff {
            step,
            max_tokens,
            partial: text,
        }),
        FinishReason::Stop if text.is_empty() => Err(MethodError::EmptyOutput { step }),
        FinishReason::Stop => Ok(text),
    }
}

/// Chunks as passages numbered from 1, in the order given.
fn numbered(found: impl IntoIterator<Item = (StoredChunk, f64)>) -> Vec<Passage> {
    found
        .into_iter()
        .enumerate()
        .map(|(i, (chunk, score))| Passage {
            rows: chunk.rows(),
            number: i + 1,
            chunk_id: chunk.id,
            path: chunk.path,
            heading_path: chunk.heading_path,
            span_start: chunk.span_start,
            span_end: chunk.span_end,
            page: chunk.page,
            ocr: chunk.ocr_confidence.map(OcrMark::new),
            score,
            suspected_instructions: suspected_instructions(&chunk.text),
            text: chunk.text,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::runner::AskRequest;
    use crate::testing::{
        ask_with, library_with, says, Indexed, ScriptedLlm, ADA_NOTES, ADA_QUESTION,
    };
    use folio_llm::Role;
    use folio_store::{RunRecord, RunStatus};
    use tempfile::TempDir;

    /// Ada's question asked with vanilla-rag of a model that says `replies`.
    async fn ask_vanilla(replies: &[&str]) -> (RunRecord, ScriptedLlm, Indexed, TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let llm = ScriptedLlm::new(replies.iter().map(|r| says(r)).collect());
        let request = AskRequest::new(ADA_QUESTION, "vanilla-rag");
        let (run, _) = ask_with(&library, &llm, &request).await;
        (run, llm, library, dir)
    }

    #[tokio::test]
    async fn an_answer_of_a_marker_alone_is_asked_for_again_in_the_same_chat() {
        let (run, llm, library, _dir) = ask_vanilla(&["[1]", "Ada Lovelace wrote it."]).await;

        assert_eq!(run.status, RunStatus::Done);
        assert_eq!(run.answer.as_deref(), Some("Ada Lovelace wrote it."));
        let sent = llm.sent();
        assert_eq!(sent.len(), 2);
        let (first, again) = (&sent[0], &sent[1]);
        assert_eq!(again[..first.len()], first[..], "the same chat, continued");
        assert_eq!(again[first.len()].role, Role::Assistant);
        assert_eq!(again[first.len()].content, "[1]");
        assert!(again[first.len() + 1]
            .content
            .contains("a number is not an answer"));
        assert_eq!(
            run.citations.as_array().unwrap().len(),
            1,
            "the bare marker still names the passage the answer came from"
        );
        let calls = library.store().llm_calls(run.id).await.unwrap();
        let steps: Vec<&str> = calls.iter().map(|c| c.step.as_str()).collect();
        assert_eq!(
            steps,
            ["answer", "answer"],
            "streamed as the answer it mends"
        );
    }

    #[tokio::test]
    async fn an_answer_with_words_is_not_asked_for_again() {
        let (run, llm, ..) = ask_vanilla(&["Ada Lovelace [1].", "unused"]).await;

        assert_eq!(run.answer.as_deref(), Some("Ada Lovelace [1]."));
        assert_eq!(llm.unused(), 1);
    }
}
