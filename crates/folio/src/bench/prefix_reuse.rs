//! Benchmark `llm` (fourth part): what the embedded model's kept prompts
//! save the multi-call methods and a follow-up. Each case is answered once
//! through a recorder that keeps every call's messages and options; the
//! recorded calls are then replayed against the model in the same order
//! twice, every call computed from scratch (the baseline) and every call
//! starting from the kept prompts. Both replays compute exactly the same
//! prompts and differ only in the cache, so the ratios are its effect
//! alone: prompt tokens computed over those sent (the target: at
//! most 0.6), and seconds with the cache over seconds without.

use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::answer_overhead::{dev_questions, rust_book_library};
use super::report::{Report, Row, Target};
use super::{Context, TempDir};
use folio_engine::llm::{
    Capabilities, ChatMessage, ChatRequest, Completion, GenerateOptions, Llm, ModelInfo,
};
use folio_engine::methods::runner::AskRequest;
use folio_engine::methods::EventSink;
use folio_engine::store::RunRecord;

const TARGET_COMPUTED: f64 = 0.6;
const METHODS: [&str; 3] = ["rdr2", "activerag", "crp-rag"];
/// Two-turn conversations from crates/folio/tests/fixtures/rust-book-conversations.jsonl.
const CONVERSATIONS: [[&str; 2]; 3] = [
    [
        "What is the default opt-level of Cargo's release profile?",
        "And for the dev profile?",
    ],
    [
        "Which function spawns a new thread in Rust?",
        "What type does it return?",
    ],
    [
        "Which trait lets a type run code when a value goes out of scope?",
        "How do I clean one up early instead?",
    ],
];

/// Every call the methods make, passed on unchanged.
struct Recorder<'a> {
    model: &'a dyn Llm,
    calls: Mutex<Vec<(Vec<ChatMessage>, GenerateOptions)>>,
}

#[async_trait::async_trait]
impl Llm for Recorder<'_> {
    fn info(&self) -> ModelInfo {
        self.model.info()
    }

    fn capabilities(&self) -> Capabilities {
        self.model.capabilities()
    }

    async fn chat(&self, request: ChatRequest<'_>) -> folio_engine::llm::Result<Completion> {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push((request.messages.to_vec(), request.options.clone()));
        }
        self.model.chat(request).await
    }
}

impl Recorder<'_> {
    fn take(&self) -> Vec<(Vec<ChatMessage>, GenerateOptions)> {
        self.calls
            .lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default()
    }
}

/// One replay's totals.
#[derive(Default, Clone, Copy)]
struct Replayed {
    sent: u64,
    cached: u64,
    seconds: f64,
}

impl Replayed {
    fn add(&mut self, other: Replayed) {
        self.sent += other.sent;
        self.cached += other.cached;
        self.seconds += other.seconds;
    }

    fn computed(&self) -> f64 {
        (self.sent - self.cached) as f64 / self.sent.max(1) as f64
    }
}

/// The calls asked again in order, each kept in the cache or not; `counted`
/// calls from the first on make up the totals (the ones before only fill
/// the cache, as a follow-up's first turn does).
async fn replay(
    model: &dyn Llm,
    calls: &[(Vec<ChatMessage>, GenerateOptions)],
    counted: usize,
    reuse: bool,
) -> Result<Replayed> {
    let cancel = CancellationToken::new();
    let mut total = Replayed::default();
    for (i, (messages, options)) in calls.iter().enumerate() {
        let options = GenerateOptions {
            cache_prefix: reuse,
            ..options.clone()
        };
        let started = Instant::now();
        let completion = model
            .chat(ChatRequest {
                messages,
                options: &options,
                on_token: None,
                cancel: &cancel,
            })
            .await?;
        if i >= counted {
            total.add(Replayed {
                sent: completion.usage.prompt_tokens.into(),
                cached: completion.usage.cached_tokens.into(),
                seconds: started.elapsed().as_secs_f64(),
            });
        }
    }
    Ok(total)
}

/// Both replays of one recorded case: without the cache, then with it.
async fn both(
    model: &dyn Llm,
    calls: &[(Vec<ChatMessage>, GenerateOptions)],
    counted: usize,
) -> Result<(Replayed, Replayed)> {
    let scratch = replay(model, calls, counted, false).await?;
    let kept = replay(model, calls, counted, true).await?;
    Ok((scratch, kept))
}

pub(crate) async fn run(ctx: &Context) -> Result<Report> {
    let questions = dev_questions(ctx)?;
    let questions = &questions[..if ctx.quick { 1 } else { 3.min(questions.len()) }];
    let conversations = &CONVERSATIONS[..if ctx.quick { 1 } else { CONVERSATIONS.len() }];
    let dir = TempDir::new("prefix-reuse")?;
    let library = rust_book_library(ctx, &dir, "the prefix-reuse cases").await?;
    let model = library.llm().await?;
    let recorder = Recorder {
        model: model.as_ref(),
        calls: Mutex::default(),
    };
    let sink = EventSink::default();
    let cancel = CancellationToken::new();
    let ask = |request: AskRequest| {
        let (library, recorder, sink, cancel) = (&library, &recorder, &sink, &cancel);
        async move {
            let run = library.ask_with(recorder, &request, sink, cancel).await?;
            if run.llm_calls == 0 {
                bail!("{} answered without the model: {:?}", run.method, run.error);
            }
            Ok::<RunRecord, anyhow::Error>(run)
        }
    };

    let mut rows = Vec::new();
    let mut details = Vec::new();
    let mut case_rows = |name: String, scratch: Replayed, kept: Replayed, calls: usize| {
        rows.push(
            Row::new(
                format!("{name}: prompt tokens computed"),
                "tokens",
                (kept.sent - kept.cached) as f64,
            )
            .baseline(scratch.sent as f64)
            .target(Target::RatioAtMost(TARGET_COMPUTED)),
        );
        rows.push(
            Row::new(format!("{name}: seconds"), "s", kept.seconds).baseline(scratch.seconds),
        );
        details.push(json!({
            "case": name,
            "calls": calls,
            "sent": scratch.sent,
            "cached": kept.cached,
            "computed_ratio": kept.computed(),
            "seconds_from_scratch": scratch.seconds,
            "seconds_with_cache": kept.seconds,
        }));
    };

    for method in METHODS {
        let (mut scratch, mut kept, mut calls) = (Replayed::default(), Replayed::default(), 0);
        for question in questions {
            eprintln!("llm: {method} — {question}");
            let mut request = AskRequest::new(question.as_str(), method);
            request.temperature = Some(0.0);
            ask(request).await?;
            let recorded = recorder.take();
            calls += recorded.len();
            let (s, k) = both(model.as_ref(), &recorded, 0).await?;
            scratch.add(s);
            kept.add(k);
        }
        case_rows(method.to_string(), scratch, kept, calls);
    }

    let (mut scratch, mut kept, mut calls) = (Replayed::default(), Replayed::default(), 0);
    for [first, follow_up] in conversations {
        eprintln!("llm: follow-up — {first} / {follow_up}");
        let mut request = AskRequest::new(*first, "vanilla-rag");
        request.temperature = Some(0.0);
        let turn = ask(request.clone()).await?;
        // The replay asks the first turn again, so its prompt is kept
        // before the follow-up's calls, as it was when a person asked.
        let mut all = recorder.take();
        let first_calls = all.len();
        request.question = follow_up.to_string();
        request.thread = Some(turn.thread_id);
        ask(request).await?;
        let recorded = recorder.take();
        calls += recorded.len();
        all.extend(recorded);
        let (s, k) = both(model.as_ref(), &all, first_calls).await?;
        scratch.add(s);
        kept.add(k);
    }
    case_rows("follow-up (vanilla-rag)".to_string(), scratch, kept, calls);

    Ok(Report {
        name: "llm-prefix-reuse",
        title: "Kept prompts: prompt tokens computed and seconds, multi-call methods and a follow-up".into(),
        baseline: "the same recorded calls replayed with every prompt computed from scratch".into(),
        rows,
        details: json!({
            "model": ctx.config.llm.model,
            "questions": questions,
            "conversations": conversations,
            "cases": details,
        }),
        notes: vec![
            "each case is answered once through a recorder; both replays ask the model the very same calls in the same order".into(),
            "a follow-up's first turn is replayed before it but not counted".into(),
        ],
    })
}
