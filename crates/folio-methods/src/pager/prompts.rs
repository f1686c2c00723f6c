//! PAGER's steps: the template each renders and the names it may use.

use folio_llm::prompt;
use folio_llm::prompts::Prompt;

pub(super) static OUTLINE: Prompt = prompt!("pager/outline.j2", ["question", "retry"]);
pub(super) static SUB_QUERY: Prompt =
    prompt!("pager/sub-query.j2", ["question", "heading", "page"]);
pub(super) static SUB_QUERIES: Prompt =
    prompt!("pager/sub-queries.j2", ["question", "headings", "page"]);
pub(super) static FILL: Prompt = prompt!(
    "pager/fill.j2",
    [
        "question",
        "sub_query",
        "heading",
        "page",
        "passages",
        "last",
        "retry"
    ]
);
pub(super) static SUMMARY: Prompt = prompt!(
    "pager/summary.j2",
    ["question", "sub_query", "summaries", "passages", "retry"]
);
pub(super) static ANSWER: Prompt =
    prompt!("pager/answer.j2", ["question", "page"]).writing_the_answer();

pub(super) static ALL: &[&Prompt] = &[&OUTLINE, &SUB_QUERY, &SUB_QUERIES, &FILL, &SUMMARY, &ANSWER];
