//! RDR²'s steps: the template each renders and the names it may use.

use folio_llm::prompt;
use folio_llm::prompts::Prompt;

pub(super) static ROUTE: Prompt = prompt!(
    "rdr2/route.j2",
    ["question", "title", "tree", "expand", "refuse"]
);
pub(super) static READ: Prompt =
    prompt!("rdr2/read.j2", ["question", "passages"]).writing_the_answer();

pub(super) static ALL: &[&Prompt] = &[&ROUTE, &READ];
