//! CRP-RAG's steps: the template each renders and the names it may use.

use folio_llm::prompt;
use folio_llm::prompts::Prompt;

pub(super) static NEXT_STEPS: Prompt = prompt!(
    "crp-rag/next-steps.j2",
    ["question", "conditions", "branching", "retry"]
);
pub(super) static FUSE: Prompt = prompt!("crp-rag/fuse.j2", ["question", "steps"]);
pub(super) static KNOWLEDGE: Prompt =
    prompt!("crp-rag/knowledge.j2", ["question", "step", "passages"]);
pub(super) static CHECK: Prompt = prompt!("crp-rag/check.j2", ["step", "knowledge"]);
pub(super) static ASSESS: Prompt = prompt!("crp-rag/assess.j2", ["step", "knowledge"]);
pub(super) static REASON: Prompt = prompt!(
    "crp-rag/reason.j2",
    ["question", "known", "step", "knowledge", "last"]
)
.writing_the_answer();
pub(super) static REASON_ONCE: Prompt =
    prompt!("crp-rag/reason-once.j2", ["question", "steps"]).writing_the_answer();
pub(super) static MERGE: Prompt =
    prompt!("crp-rag/merge.j2", ["question", "answers"]).writing_the_answer();

pub(super) static ALL: &[&Prompt] = &[
    &NEXT_STEPS,
    &FUSE,
    &KNOWLEDGE,
    &CHECK,
    &ASSESS,
    &REASON,
    &REASON_ONCE,
    &MERGE,
];
