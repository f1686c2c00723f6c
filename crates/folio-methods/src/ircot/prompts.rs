//! IRCoT's steps: the template each renders and the names it may use.

use folio_llm::prompt;
use folio_llm::prompts::Prompt;

pub(super) static REASON: Prompt = prompt!("ircot/reason.j2", ["question", "passages", "thoughts"]);
pub(super) static ANSWER: Prompt =
    prompt!("ircot/answer.j2", ["question", "passages", "reasoning"]).writing_the_answer();

pub(super) static ALL: &[&Prompt] = &[&REASON, &ANSWER];
