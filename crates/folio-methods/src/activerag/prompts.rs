//! ActiveRAG's steps: the template each renders and the names it may use.

use folio_llm::prompt;
use folio_llm::prompts::Prompt;

pub(super) static SELF_INQUIRY: Prompt = prompt!("activerag/self-inquiry.j2", ["question"]);
pub(super) static ASSIMILATE: Prompt = prompt!(
    "activerag/assimilate.j2",
    ["question", "passages", "variant"]
);
pub(super) static ACCOMMODATE: Prompt = prompt!(
    "activerag/accommodate.j2",
    ["question", "thought", "knowledge", "variant", "passages"]
)
.writing_the_answer();
pub(super) static CONCLUDE: Prompt = prompt!("activerag/conclude.j2", ["question", "reasoning"]);

pub(super) static ALL: &[&Prompt] = &[&SELF_INQUIRY, &ASSIMILATE, &ACCOMMODATE, &CONCLUDE];
