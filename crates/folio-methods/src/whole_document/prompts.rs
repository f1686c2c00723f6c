//! whole-document's steps: the template each renders and the names it may use.

use folio_llm::prompt;
use folio_llm::prompts::Prompt;

pub(super) static SUMMARIZE: Prompt = prompt!(
    "whole-document/summarize.j2",
    ["title", "heading", "text", "parts"]
);
pub(super) static ANSWER: Prompt = prompt!(
    "whole-document/answer.j2",
    ["question", "title", "sections"]
)
.writing_the_answer();

pub(super) static ALL: &[&Prompt] = &[&SUMMARIZE, &ANSWER];
