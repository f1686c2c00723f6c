//! A thread's earlier turns as a method sees them. A follow-up is first
//! rewritten into a question that stands on its own (one model call, the
//! `rewrite` step), which retrieval and the method read; the steps that
//! write the answer also see the earlier turns as chat messages. Both are
//! bounded by a token budget: the newest turns are kept, older ones are
//! left out, and the run's [`Turn`] says which and why.

use serde::Serialize;

use super::citations::without_markers;
use super::words::{is_content, words};
use super::{MethodContext, MethodError, Params};
use folio_llm::prompts::Prompt;
use folio_llm::response_format::{object_schema, one_line, text_schema};
use folio_llm::{ChatMessage, Completion, FinishReason, GenerateOptions, ReplySchema};
use folio_store::{JoinedBecause, LeftOut, LeftOutReason, Rewrite, RunRecord, RunStatus, Turn};

/// The share of the model's context window that earlier turns may take:
/// the rest is the method's prompt (its passages) and the reply.
const HISTORY_SHARE: usize = 4;

/// A standalone question is one line; this is far more than one needs.
const REWRITE_MAX_TOKENS: u32 = 96;

/// Longer replies are not a question but the model answering or rambling.
const REWRITE_MAX_CHARS: usize = 400;

/// How much of an earlier answer the rewrite is shown: enough to name what
/// "it" is ("`thread::spawn` starts a thread"), not the whole answer.
const BRIEF_ANSWER_CHARS: usize = 240;

/// What an earlier turn that wrote nothing said, as the model sees it.
const NO_ANSWER: &str = "(no answer was written)";

/// The earlier turns a method is shown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    turns: Vec<EarlierTurn>,
    left_out: Vec<LeftOut>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct EarlierTurn {
    run: i64,
    question: String,
    answer: String,
}

impl EarlierTurn {
    /// The turn with its answer cut to its opening, on a word boundary.
    fn in_brief(&self) -> EarlierTurn {
        let answer = match self.answer.char_indices().nth(BRIEF_ANSWER_CHARS) {
            None => self.answer.clone(),
            Some((at, _)) => {
                let cut = &self.answer[..at];
                let cut = cut.rsplit_once(' ').map_or(cut, |(head, _)| head);
                format!("{cut} …")
            }
        };
        EarlierTurn {
            answer: answer.split_whitespace().collect::<Vec<_>>().join(" "),
            ..self.clone()
        }
    }
}

/// How many tokens of the model's context the history may take.
pub fn history_budget(context_size: u32) -> usize {
    context_size as usize / HISTORY_SHARE
}

/// A cautious count of `text`'s tokens without the model's tokenizer:
/// English runs about four characters a token, code and other scripts
/// fewer, so three errs towards leaving a turn out.
fn estimated_tokens(text: &str) -> usize {
    text.len().div_ceil(3)
}

impl Conversation {
    /// The turns of `earlier` (a thread's runs, oldest first) that fit in
    /// `budget` tokens, newest first until one does not fit. A turn that
    /// failed, was cut off or was stopped still gives its question and
    /// whatever it wrote: a follow-up ("why can't I just do it directly?")
    /// needs that question to mean anything. Only a turn still being
    /// answered is left out.
    pub fn select(earlier: &[RunRecord], budget: usize) -> Conversation {
        let mut turns = Vec::new();
        let mut left_out = Vec::new();
        let mut spent = 0;
        let mut full = false;
        for run in earlier.iter().rev() {
            if run.status == RunStatus::Running {
                left_out.push(LeftOut {
                    run: run.id,
                    reason: LeftOutReason::NoAnswer,
                });
                continue;
            }
            let answer = run
                .answer
                .as_deref()
                .map(without_markers)
                .filter(|a| !a.trim().is_empty())
                .unwrap_or_else(|| NO_ANSWER.to_string());
            // A follow-up was answered as its rewrite; that is the question
            // the answer goes with.
            let question = run
                .turn
                .as_ref()
                .and_then(|t| t.rewrite.query())
                .unwrap_or(&run.question)
                .to_string();
            let cost = estimated_tokens(&question) + estimated_tokens(&answer);
            full = full || spent + cost > budget;
            if full {
                left_out.push(LeftOut {
                    run: run.id,
                    reason: LeftOutReason::OverBudget,
                });
                continue;
            }
            spent += cost;
            turns.push(EarlierTurn {
                run: run.id,
                question,
                answer,
            });
        }
        turns.reverse();
        left_out.reverse();
        Conversation { turns, left_out }
    }

    /// No earlier turn to show: the question is asked as a first turn.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The turns as alternating user and assistant messages, oldest first.
    pub fn messages(&self) -> Vec<ChatMessage> {
        self.turns
            .iter()
            .flat_map(|t| {
                [
                    ChatMessage::user(t.question.clone()),
                    ChatMessage::assistant(t.answer.clone()),
                ]
            })
            .collect()
    }

    /// What the run records of how it followed up.
    pub fn turn(&self, rewrite: Rewrite) -> Turn {
        Turn {
            history: self.turns.iter().map(|t| t.run).collect(),
            left_out: self.left_out.clone(),
            rewrite,
        }
    }

    /// Asks the model to rewrite `follow_up` so it stands on its own. An
    /// unusable reply falls back to the follow-up as asked; a failed call
    /// (a server that is down, a cancelled run) fails the run.
    pub async fn rewrite(
        &self,
        ctx: &MethodContext<'_>,
        follow_up: &str,
        params: &Params,
    ) -> Result<Rewrite, MethodError> {
        let options = GenerateOptions {
            max_tokens: REWRITE_MAX_TOKENS,
            temperature: 0.0,
            grammar: Some(rewrite_grammar(follow_up).to_string()),
            schema: Some(rewrite_schema()),
            ..ctx.options(params)
        };
        let turns: Vec<EarlierTurn> = self.turns.iter().map(EarlierTurn::in_brief).collect();
        let vars = minijinja::context!(turns, follow_up);
        let reply = ctx
            .generate_with(REWRITE_STEP, &REWRITE, vars, &options)
            .await?;
        let examples = ctx.example_replies(&REWRITE);
        Ok(match standalone_question(&reply, &examples) {
            Ok(query) => match self.point_lost(&query, follow_up) {
                Some(because) => self.joined(follow_up, because),
                None => Rewrite::Standalone { query },
            },
            Err(reason) => Rewrite::FellBack { reason },
        })
    }

    /// The follow-up searched together with the question before it: what
    /// a rewrite that lost the follow-up's point falls back to, and the
    /// baseline a rewrite must beat.
    pub fn joined(&self, follow_up: &str, because: JoinedBecause) -> Rewrite {
        let earlier = self.turns.last().map_or("", |t| t.question.as_str());
        Rewrite::Joined {
            query: format!("{earlier} {follow_up}").trim().to_string(),
            because,
        }
    }

    /// Why `rewrite` does not carry what `follow_up` asks, if it does not:
    /// it is an earlier question again (SmolLM2-135M did so for five of nine
    /// rust-book follow-ups), the follow-up again with its "it" unresolved
    /// (the 0.5B Qwen for four of ten), or it leaves out a word the
    /// follow-up asks about ("And floating-point ones?" rewritten as the
    /// earlier question about integers, by the 1.5B).
    fn point_lost(&self, rewrite: &str, follow_up: &str) -> Option<JoinedBecause> {
        let written = words(rewrite);
        let asked = words(follow_up);
        if written == asked {
            let refers =
                asked.iter().any(|w| REFERRING.contains(&w.as_str())) || carries_on(&asked);
            return refers.then_some(JoinedBecause::Unresolved);
        }
        if self.turns.iter().any(|t| words(&t.question) == written) {
            return Some(JoinedBecause::RepeatedEarlier);
        }
        let dropped = asked
            .iter()
            .filter(|w| is_content(w) && !REFERRING.contains(&w.as_str()))
            .any(|word| !written.iter().any(|w| same_stem(w, word)));
        dropped.then_some(JoinedBecause::DroppedWords)
    }
}

/// Words that point back at the conversation: a follow-up that keeps one
/// does not stand alone.
const REFERRING: &[&str] = &[
    "it", "its", "that", "this", "those", "these", "they", "them", "their", "one", "ones", "he",
    "she", "him", "her", "there",
];

/// Whether a follow-up opens by carrying on from the turn before ("And for
/// constants?", "What about floats?"), leaving out what it asks about.
fn carries_on(words: &[String]) -> bool {
    match words {
        [first, ..] if ["and", "or", "but", "so", "also"].contains(&first.as_str()) => true,
        [first, second, ..] => (first == "what" || first == "how") && second == "about",
        _ => false,
    }
}

/// Whether two words are one word inflected ("waits" and "wait",
/// "closures" and "closure"): equal, or sharing all but the last two
/// letters of the shorter, at least four.
fn same_stem(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let shared = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let shorter = a.chars().count().min(b.chars().count());
    shared >= 4 && shared + 2 >= shorter
}

pub const REWRITE_STEP: &str = "rewrite";

static REWRITE_SYSTEM: Prompt = folio_llm::fixed_prompt!("thread/rewrite-system.j2");
static REWRITE_EXAMPLES: Prompt = folio_llm::fixed_prompt!("thread/rewrite-examples.j2");
/// The rewrite is sent under its own system message, after worked
/// examples: a small model told it answers questions answers the
/// follow-up instead of rewriting it.
pub(super) static REWRITE: Prompt = folio_llm::prompt!("thread/rewrite.j2", ["turns", "follow_up"])
    .framed(&REWRITE_SYSTEM, &REWRITE_EXAMPLES);

/// The shape of a rewrite, on backends that take a grammar: one line, and
/// a question if the follow-up is one. Without the question mark a small
/// model tends to answer the follow-up instead of rewriting it. A second
/// question may follow the first: the 1.5B Qwen rewrites "And
/// floating-point ones?" as the earlier question about integers and then
/// "And what about floating-point ones?", and cutting at the first mark
/// kept only the earlier question.
fn rewrite_grammar(follow_up: &str) -> &'static str {
    if follow_up.trim_end().ends_with('?') {
        "root ::= [^\\n?]{1,400} \"?\" ([^\\n?]{1,200} \"?\")?\n"
    } else {
        "root ::= [^\\n]{1,400}\n"
    }
}

/// [`rewrite_grammar`]'s line as a JSON schema for a server.
fn rewrite_schema() -> ReplySchema {
    ReplySchema {
        schema: object_schema(&[("question", text_schema(1, 400))]),
        to_text: |reply| reply["question"].as_str().map(one_line),
    }
}

/// The question in a rewrite reply, or why the reply is unusable.
/// `examples` are the worked examples' replies, which a small model
/// sometimes repeats word for word.
fn standalone_question(reply: &Completion, examples: &[&str]) -> Result<String, String> {
    if reply.finish == FinishReason::Length {
        return Err(format!(
            "the rewrite ran past {REWRITE_MAX_TOKENS} tokens, so it is not one question"
        ));
    }
    let line = reply
        .text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let label = ["standalone question:", "rewritten question:", "question:"]
        .iter()
        .find(|label| {
            line.get(..label.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(label))
        });
    let line = match label {
        Some(label) => line[label.len()..].trim(),
        None => line,
    };
    let question = line.trim_matches(['"', '“', '”', '\'', '`']).trim();
    if question.is_empty() {
        return Err("the rewrite reply was empty".to_string());
    }
    if examples.iter().any(|e| e.eq_ignore_ascii_case(question)) {
        return Err("the rewrite repeated one of the prompt's worked examples".to_string());
    }
    if question.len() > REWRITE_MAX_CHARS {
        return Err(format!(
            "the rewrite reply ran to {} characters, so it is not one question",
            question.len()
        ));
    }
    Ok(question.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use folio_llm::Usage;

    fn run(id: i64, status: RunStatus, question: &str, answer: Option<&str>) -> RunRecord {
        RunRecord {
            id,
            thread_id: 1,
            turn: None,
            question: question.into(),
            method: "vanilla-rag".into(),
            scope: Default::default(),
            params: json!({}),
            model: json!({}),
            status,
            answer: answer.map(str::to_string),
            cut_off: None,
            citations: json!([]),
            trace: None,
            error: None,
            timings: json!({}),
            llm_calls: 1,
            prompt_tokens: 1,
            cached_tokens: 0,
            completion_tokens: 1,
            created_at: 0,
            finished_at: None,
        }
    }

    fn reply(text: &str, finish: FinishReason) -> Completion {
        Completion {
            text: text.into(),
            finish,
            usage: Usage::default(),
            logprobs: None,
            shaping: None,
        }
    }

    #[test]
    fn the_newest_turns_that_fit_are_kept_and_the_rest_named() {
        let long = "x".repeat(300); // 100 tokens by the estimate
        let runs = [
            run(1, RunStatus::Done, "first?", Some(&long)),
            run(2, RunStatus::Running, "still going?", None),
            run(3, RunStatus::Done, "second?", Some(&long)),
            run(4, RunStatus::Done, "third?", Some("Short [1].")),
        ];
        let conversation = Conversation::select(&runs, 110);
        let turn = conversation.turn(Rewrite::NotNeeded);
        assert_eq!(turn.history, vec![3, 4], "oldest first");
        assert_eq!(
            turn.left_out,
            vec![
                LeftOut {
                    run: 1,
                    reason: LeftOutReason::OverBudget
                },
                LeftOut {
                    run: 2,
                    reason: LeftOutReason::NoAnswer
                },
            ]
        );
        let messages = conversation.messages();
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[0], ChatMessage::user("second?"));
        assert_eq!(
            messages[3],
            ChatMessage::assistant("Short."),
            "markers named another turn's passages"
        );
    }

    #[test]
    fn an_older_turn_that_would_fit_is_not_shown_past_a_gap() {
        let runs = [
            run(1, RunStatus::Done, "a?", Some("b")),
            run(2, RunStatus::Done, "c?", Some(&"y".repeat(600))),
            run(3, RunStatus::Done, "d?", Some("e")),
        ];
        let turn = Conversation::select(&runs, 50).turn(Rewrite::NotNeeded);
        assert_eq!(turn.history, vec![3], "the conversation stays contiguous");
    }

    #[test]
    fn a_rewritten_turn_is_shown_as_its_standalone_question() {
        let mut follow_up = run(2, RunStatus::Done, "And the dev one?", Some("0."));
        follow_up.turn = Some(Turn {
            history: vec![1],
            left_out: Vec::new(),
            rewrite: Rewrite::Standalone {
                query: "What is opt-level in the dev profile?".into(),
            },
        });
        let conversation = Conversation::select(&[follow_up], 1000);
        assert_eq!(
            conversation.messages()[0].content,
            "What is opt-level in the dev profile?"
        );
    }

    #[test]
    fn a_rewrite_reply_is_read_or_refused_with_a_reason() {
        let examples = ["Who maintains the toml crate?"];
        let read = |text: &str, finish| standalone_question(&reply(text, finish), &examples);
        assert_eq!(
            read(
                "\n  Standalone question: \"Who maintains toml?\"\n",
                FinishReason::Stop
            ),
            Ok("Who maintains toml?".to_string())
        );
        assert_eq!(
            read("What is cargo?", FinishReason::Stop),
            Ok("What is cargo?".to_string())
        );
        assert!(read("  \n ", FinishReason::Stop)
            .unwrap_err()
            .contains("empty"));
        assert!(read("who maintains the TOML crate?", FinishReason::Stop)
            .unwrap_err()
            .contains("worked examples"));
        assert!(read("\"\"", FinishReason::Stop)
            .unwrap_err()
            .contains("empty"));
        assert!(read("What is", FinishReason::Length)
            .unwrap_err()
            .contains("96 tokens"));
        assert!(read(&"word ".repeat(100), FinishReason::Stop)
            .unwrap_err()
            .contains("499 characters"));
    }

    #[test]
    fn the_budget_is_a_quarter_of_the_context() {
        assert_eq!(history_budget(4096), 1024);
    }

    #[test]
    fn a_rewrite_that_loses_the_follow_ups_point_is_named_for_how() {
        let runs = [run(
            1,
            RunStatus::Done,
            "Which type do Rust integer literals default to?",
            Some("i32"),
        )];
        let conversation = Conversation::select(&runs, 1000);
        let lost = |rewrite: &str, follow_up: &str| conversation.point_lost(rewrite, follow_up);
        assert_eq!(
            lost(
                "What type do Rust integer literals default to?",
                "And floating-point ones?"
            ),
            Some(JoinedBecause::DroppedWords)
        );
        assert_eq!(
            lost(
                "which type do rust integer literals default to",
                "And floats?"
            ),
            Some(JoinedBecause::RepeatedEarlier)
        );
        assert_eq!(
            lost("What does it return?", "What does it return?"),
            Some(JoinedBecause::Unresolved)
        );
        assert_eq!(
            lost("What is a trait object?", "What is a trait object?"),
            None,
            "a follow-up that stood alone may be kept as it is"
        );
        for elliptical in ["And for constants?", "What about floats?"] {
            assert_eq!(
                lost(elliptical, elliptical),
                Some(JoinedBecause::Unresolved)
            );
        }
        assert_eq!(
            lost(
                "Which type do Rust floating-point literals default to?",
                "And floating-point ones?"
            ),
            None
        );
        assert_eq!(
            lost(
                "Which method on a JoinHandle waits for its thread to finish?",
                "Which method on that waits for the thread to finish?"
            ),
            None,
            "inflections and articles may change"
        );
        assert_eq!(
            conversation.joined("And floats?", JoinedBecause::Asked),
            Rewrite::Joined {
                query: "Which type do Rust integer literals default to? And floats?".into(),
                because: JoinedBecause::Asked
            }
        );
    }

    #[test]
    fn the_rewrite_sees_an_earlier_answer_in_brief() {
        let long = format!(
            "thread::spawn starts a thread. {}",
            "More words here. ".repeat(40)
        );
        let runs = [run(
            1,
            RunStatus::Done,
            "Which function starts a thread?",
            Some(&long),
        )];
        let brief = Conversation::select(&runs, 10_000).turns[0].in_brief();
        assert!(brief.answer.starts_with("thread::spawn starts a thread."));
        assert!(brief.answer.ends_with(" …"), "{}", brief.answer);
        assert!(brief.answer.chars().count() <= BRIEF_ANSWER_CHARS + 2);
        assert_eq!(brief.question, "Which function starts a thread?");
    }
}

/// Follow-ups asked through the runner with a scripted model over a real
/// library: what is rewritten, what each step is shown, what is stored.
#[cfg(test)]
mod asked_in_a_thread {

    use super::NO_ANSWER;

    use crate::runner::{AskRequest, RewriteMode};
    use crate::testing::Indexed;
    use crate::testing::{
        ask_with, library, library_with, refused, says, thread, ScriptedLlm, ADA_NOTES,
    };
    use crate::RunEvent;
    use folio_llm::{ChatMessage, LlmError, Role};
    use folio_store::{JoinedBecause, LeftOut, LeftOutReason, Rewrite, RunRecord, RunStatus};

    fn follow_up(question: &str, method: &str, thread: i64) -> AskRequest {
        let mut request = AskRequest::new(question, method);
        request.thread = Some(thread);
        request
    }

    fn steps(sent: &[Vec<ChatMessage>]) -> Vec<Role> {
        sent.iter().flat_map(|m| m.iter().map(|m| m.role)).collect()
    }

    async fn first_turn(library: &Indexed, question: &str, answer: &str) -> RunRecord {
        let llm = ScriptedLlm::new(vec![says(answer)]);
        let (run, _) = ask_with(library, &llm, &AskRequest::new(question, "llm-only")).await;
        assert_eq!(run.status, RunStatus::Done);
        run
    }

    #[tokio::test]
    async fn a_follow_up_is_retrieved_as_its_rewrite_and_answered_with_the_history() {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let first = first_turn(
            &library,
            "Who wrote the first algorithm for the Analytical Engine?",
            "Ada Lovelace wrote it [1].",
        )
        .await;
        let llm = ScriptedLlm::new(vec![
            says("Standalone question: Where was Ada Lovelace born?"),
            says("In London [1]."),
        ]);
        let request = follow_up("Where was she born?", "vanilla-rag", first.thread_id);
        let (run, events) = ask_with(&library, &llm, &request).await;

        assert_eq!(run.status, RunStatus::Done);
        assert_eq!(run.thread_id, first.thread_id);
        assert_eq!(
            run.question, "Where was she born?",
            "the person's words are kept"
        );
        let turn = run.turn.clone().unwrap();
        assert_eq!(turn.history, vec![first.id]);
        assert!(turn.left_out.is_empty());
        assert_eq!(turn.rewrite.query(), Some("Where was Ada Lovelace born?"));
        let steps_called: Vec<String> = library
            .store()
            .llm_calls(run.id)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.step)
            .collect();
        assert_eq!(steps_called, ["rewrite", "answer"]);
        assert!(events
            .iter()
            .any(|e| matches!(e, RunEvent::Rewritten { rewrite } if rewrite.query().is_some())));

        let sent = llm.sent();
        let rewrite_prompt = &sent[0].last().unwrap().content;
        assert!(rewrite_prompt.contains("Earlier question: Who wrote the first algorithm"));
        assert!(rewrite_prompt.contains("Follow-up: Where was she born?"));
        assert!(
            rewrite_prompt.contains("Its answer: Ada Lovelace wrote it.\n"),
            "the answer names what \"she\" is; its markers named passages not shown: {rewrite_prompt}"
        );
        let answer = &sent[1];
        assert_eq!(
            steps(std::slice::from_ref(answer)),
            [Role::System, Role::User, Role::Assistant, Role::User]
        );
        assert_eq!(answer[2].content, "Ada Lovelace wrote it.");
        assert!(answer[3]
            .content
            .contains("Question: Where was Ada Lovelace born?"));

        let trace = run.trace.unwrap();
        assert_eq!(trace["query"], "Where was Ada Lovelace born?");
        assert!(
            trace["passages"][0]["path"]
                .as_str()
                .unwrap()
                .ends_with("ada.md"),
            "{trace}"
        );
    }

    #[tokio::test]
    async fn with_rewriting_off_a_follow_up_is_searched_as_asked_and_still_sees_the_thread() {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let first = first_turn(&library, "Who wrote it?", "Ada Lovelace wrote it [1].").await;
        let llm = ScriptedLlm::new(vec![says("In London [1].")]);
        let mut request = follow_up("Where was she born?", "vanilla-rag", first.thread_id);
        request.rewrite = RewriteMode::Off;
        let (run, _) = ask_with(&library, &llm, &request).await;
        assert_eq!(run.status, RunStatus::Done);
        let turn = run.turn.clone().unwrap();
        assert_eq!(turn.rewrite, Rewrite::Off);
        assert_eq!(turn.history, vec![first.id]);
        assert_eq!(run.trace.unwrap()["query"], "Where was she born?");
        let answer = &llm.sent()[0];
        assert_eq!(answer[2].content, "Ada Lovelace wrote it.");
        assert_eq!(llm.unused(), 0, "one call: no rewrite");
    }

    #[tokio::test]
    async fn a_rewrite_that_only_repeats_an_earlier_question_is_joined_with_the_follow_up() {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let first = first_turn(&library, "Who designed the Analytical Engine?", "Babbage.").await;
        let llm = ScriptedLlm::new(vec![
            says("who designed the analytical engine?"),
            says("In 1837 [1]."),
        ]);
        let request = follow_up("And when?", "vanilla-rag", first.thread_id);
        let (run, _) = ask_with(&library, &llm, &request).await;
        let joined = "Who designed the Analytical Engine? And when?";
        assert_eq!(
            run.turn.unwrap().rewrite,
            Rewrite::Joined {
                query: joined.into(),
                because: JoinedBecause::RepeatedEarlier
            }
        );
        assert_eq!(run.trace.unwrap()["query"], joined);

        // A follow-up that is the earlier question again is simply rewritten.
        let llm = ScriptedLlm::new(vec![
            says("Who designed the Analytical Engine?"),
            says("Babbage."),
        ]);
        let request = follow_up(
            "Who designed the Analytical Engine?",
            "llm-only",
            first.thread_id,
        );
        let (run, _) = ask_with(&library, &llm, &request).await;
        assert!(matches!(
            run.turn.unwrap().rewrite,
            Rewrite::Standalone { .. }
        ));
    }

    #[tokio::test]
    async fn asked_to_join_a_follow_up_is_searched_with_the_question_before_it_without_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let first = first_turn(&library, "Who designed the Analytical Engine?", "Babbage.").await;
        let llm = ScriptedLlm::new(vec![says("In 1837 [1].")]);
        let mut request = follow_up("And when?", "vanilla-rag", first.thread_id);
        request.rewrite = RewriteMode::Join;
        let (run, _) = ask_with(&library, &llm, &request).await;
        let joined = "Who designed the Analytical Engine? And when?";
        assert_eq!(
            run.turn.unwrap().rewrite,
            Rewrite::Joined {
                query: joined.into(),
                because: JoinedBecause::Asked
            }
        );
        assert_eq!(run.trace.unwrap()["query"], joined);
        assert_eq!(llm.unused(), 0, "one call: no rewrite");
    }

    #[tokio::test]
    async fn an_unusable_rewrite_falls_back_to_the_follow_up_as_asked() {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(dir.path(), ADA_NOTES).await;
        let first = first_turn(&library, "Who designed the Analytical Engine?", "Babbage.").await;
        let llm = ScriptedLlm::new(vec![says("\"\""), says("In 1837 [1].")]);
        let request = follow_up("When did he design it?", "vanilla-rag", first.thread_id);
        let (run, _) = ask_with(&library, &llm, &request).await;
        assert_eq!(run.status, RunStatus::Done);
        let turn = run.turn.unwrap();
        assert!(
            matches!(&turn.rewrite, Rewrite::FellBack { reason } if reason.contains("empty")),
            "{:?}",
            turn.rewrite
        );
        assert_eq!(run.trace.unwrap()["query"], "When did he design it?");
    }

    #[tokio::test]
    async fn old_turns_past_the_budget_are_dropped_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        // The scripted model's context is 1,024 tokens: 256 for history,
        // which one 900-character answer (300 by the estimate) passes.
        let long = first_turn(&library, "Tell me a lot.", &"many words ".repeat(82)).await;
        let llm = ScriptedLlm::new(vec![says("Short answer.")]);
        let (second, _) = ask_with(
            &library,
            &llm,
            &follow_up("More?", "llm-only", long.thread_id),
        )
        .await;
        assert_eq!(
            second.turn.unwrap().rewrite,
            Rewrite::NotNeeded,
            "nothing fits"
        );
        let llm = ScriptedLlm::new(vec![says("And the rest?"), says("Done.")]);
        let (third, _) = ask_with(
            &library,
            &llm,
            &follow_up("And?", "llm-only", long.thread_id),
        )
        .await;
        let turn = third.turn.unwrap();
        assert_eq!(turn.history, vec![second.id]);
        assert_eq!(
            turn.left_out,
            vec![LeftOut {
                run: long.id,
                reason: LeftOutReason::OverBudget
            }]
        );
        let answer = &llm.sent()[1];
        assert_eq!(answer.len(), 4, "system, one earlier turn, the question");
        assert_eq!(answer[1].content, "More?");
        assert_eq!(answer[2].content, "Short answer.");
        let thread = thread(&library, long.thread_id).await;
        assert_eq!(
            thread.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            [long.id, second.id, third.id]
        );
        assert_eq!(thread.summary.title, "Tell me a lot.");
    }

    #[tokio::test]
    async fn a_failed_turn_still_gives_its_question_to_the_follow_up() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        let llm = ScriptedLlm::new(vec![says("  ")]);
        let first = AskRequest::new("How do I share a value between threads?", "llm-only");
        let (failed, _) = ask_with(&library, &llm, &first).await;
        assert_eq!(failed.status, RunStatus::Failed);
        let llm = ScriptedLlm::new(vec![
            says("How do I share a value between threads without Arc?"),
            says("Use scoped threads."),
        ]);
        let (run, _) = ask_with(
            &library,
            &llm,
            &follow_up(
                "Why can't I just do it directly?",
                "llm-only",
                failed.thread_id,
            ),
        )
        .await;
        let turn = run.turn.unwrap();
        assert_eq!(turn.history, vec![failed.id]);
        assert!(turn.left_out.is_empty());
        let rewrite_prompt = &llm.sent()[0];
        let shown: String = rewrite_prompt.iter().map(|m| m.content.as_str()).collect();
        assert!(
            shown.contains("How do I share a value between threads?"),
            "{shown}"
        );
        let answer_prompt = &llm.sent()[1];
        assert!(
            answer_prompt.contains(&ChatMessage::assistant(NO_ANSWER)),
            "{answer_prompt:?}"
        );
    }

    #[tokio::test]
    async fn branches_follow_the_same_turns_and_leave_their_thread_alone() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        let first = first_turn(&library, "Who designed the Analytical Engine?", "Babbage.").await;
        let mut branches = Vec::new();
        for answer in ["In 1837.", "Around 1837."] {
            let llm = ScriptedLlm::new(vec![
                says("When did Babbage design the Analytical Engine?"),
                says(answer),
            ]);
            let mut request = follow_up("When?", "llm-only", first.thread_id);
            request.fork = true;
            let (run, _) = ask_with(&library, &llm, &request).await;
            assert_ne!(run.thread_id, first.thread_id);
            assert_eq!(run.turn.as_ref().unwrap().history, vec![first.id]);
            assert_eq!(llm.sent()[1].len(), 4, "both see the same earlier turn");
            branches.push(run);
        }
        assert_ne!(branches[0].thread_id, branches[1].thread_id);
        let original = thread(&library, first.thread_id).await;
        assert_eq!(original.runs.len(), 1, "the thread itself is untouched");

        let branch = thread(&library, branches[0].thread_id).await;
        assert_eq!(branch.summary.forked_from, Some(first.thread_id));
        assert_eq!(
            branch
                .runs
                .iter()
                .map(|r| (r.id, r.thread_id))
                .collect::<Vec<_>>(),
            [
                (first.id, first.thread_id),
                (branches[0].id, branch.summary.id)
            ],
            "a branch shows the turn it follows on, then its own"
        );
        assert_eq!(branch.summary.turns, 1);
        let llm = ScriptedLlm::new(vec![says("Who built it?"), says("Nobody finished it.")]);
        let (later, _) = ask_with(
            &library,
            &llm,
            &follow_up("Who built it?", "llm-only", branch.summary.id),
        )
        .await;
        assert_eq!(later.thread_id, branch.summary.id);
        assert_eq!(later.turn.unwrap().history, vec![first.id, branches[0].id]);

        let found = library.store().threads(Some("1837"), 10).await.unwrap();
        let mut ids: Vec<i64> = found.iter().map(|t| t.id).collect();
        ids.sort();
        assert_eq!(ids, [branches[0].thread_id, branches[1].thread_id]);
    }

    #[tokio::test]
    async fn a_down_server_fails_the_turn_and_an_unknown_thread_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        let first = first_turn(&library, "Hello?", "Hi.").await;
        let down = LlmError::ServerDown {
            url: "http://127.0.0.1:9".into(),
            reason: "refused".into(),
        };
        let llm = ScriptedLlm::new(vec![Err(down)]);
        let (run, _) = ask_with(
            &library,
            &llm,
            &follow_up("And?", "llm-only", first.thread_id),
        )
        .await;
        assert_eq!(run.status, RunStatus::Failed);
        assert!(run.error.unwrap().contains("not reachable"));

        let err = refused(
            &library,
            &ScriptedLlm::new(Vec::new()),
            &follow_up("And?", "llm-only", 999),
        )
        .await;
        assert!(err.is_user_error());
        assert!(err.to_string().contains("no thread 999"), "{err}");
        assert_eq!(library.store().runs(None, 10).await.unwrap().len(), 2);
    }
}
