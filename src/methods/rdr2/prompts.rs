//! RDR²'s steps: the template each renders and the names it may use.

use crate::llm::prompts::Prompt;
use crate::prompt;

pub(super) static ROUTE: Prompt = prompt!(
    "rdr2/route.j2",
    ["question", "title", "tree", "expand", "refuse"]
);
pub(super) static READ: Prompt =
    prompt!("rdr2/read.j2", ["question", "passages"]).writing_the_answer();

pub(super) static ALL: &[&Prompt] = &[&ROUTE, &READ];
