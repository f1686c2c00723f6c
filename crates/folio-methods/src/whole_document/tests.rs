//! The whole-document method's control flow with a scripted model over a
//! real library: summaries bottom-up, the answer citing sections, kept
//! summaries reused by the next question, an edit re-summarising only what
//! it touched, the call budget refusing up front, and a scope that is not
//! one document.

use super::*;
use crate::runner::AskRequest;
use crate::testing::Indexed;
use crate::testing::{ask_with, library_with, says, ScriptedLlm};
use folio_store::{RunRecord, RunStatus, Scope};

const PARK: &str = "# Seaside Park

The park lies on the old shipyard.

## Getting there

Ferries leave the north pier at eight and at two.

## Rides

Rides open at ten.

### Towers

The SkyScreamer swing ride is 400 feet tall.

### Coasters

The Titan coaster opened in 2001.
";

struct Fixture {
    dir: tempfile::TempDir,
    library: Indexed,
    park: String,
}

impl Fixture {
    async fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let library = library_with(
            dir.path(),
            &[
                ("park.md", PARK),
                ("garden.md", "# Garden\n\nTomatoes need sun.\n"),
            ],
        )
        .await;
        let park = folio_store::place(&dir.path().join("notes/park.md"));
        Fixture { dir, library, park }
    }

    fn request(&self, question: &str) -> AskRequest {
        let mut request = AskRequest::new(question, "whole-document");
        request.scope = Scope {
            paths: vec![self.park.clone()],
            ..Scope::default()
        };
        request
    }

    /// Asks with a model that writes `summaries` summaries, then answers.
    async fn ask(&self, question: &str, summaries: usize) -> (RunRecord, ScriptedLlm) {
        let mut script: Vec<_> = (0..summaries)
            .map(|i| says(&format!("Summary number {i}.")))
            .collect();
        script.push(says("The SkyScreamer is 400 feet tall [4]."));
        let llm = ScriptedLlm::new(script);
        let (run, _) = ask_with(&self.library, &llm, &self.request(question)).await;
        (run, llm)
    }

    async fn sections(&self) -> usize {
        let parts = self
            .library
            .retrieval()
            .document(&self.park)
            .await
            .unwrap()
            .unwrap();
        Plan::of(&parts.tree, "any").sections.len()
    }
}

fn trace(run: &RunRecord) -> WholeDocumentTrace {
    match serde_json::from_value(run.trace.clone().unwrap()).unwrap() {
        Trace::WholeDocument(t) => t,
        other => panic!("{other:?}"),
    }
}

async fn steps(library: &Indexed, run: &RunRecord) -> Vec<String> {
    library
        .store()
        .llm_calls(run.id)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.step)
        .collect()
}

#[tokio::test]
async fn sections_are_summarised_bottom_up_and_the_answer_cites_them() {
    let f = Fixture::new().await;
    let sections = f.sections().await;
    assert!(sections >= 4, "{sections}");
    let (run, llm) = f.ask("How tall is the SkyScreamer?", sections).await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let mut expected = vec!["summarize".to_string(); sections];
    expected.push("answer".into());
    assert_eq!(steps(&f.library, &run).await, expected);

    let prompts = llm.prompts();
    let towers = prompts
        .iter()
        .position(|p| p.contains("400 feet tall"))
        .unwrap();
    let rides = prompts
        .iter()
        .position(|p| p.contains("Rides open at ten"))
        .unwrap();
    assert!(
        towers < rides,
        "a subsection is summarised before its section"
    );
    assert!(
        prompts[rides].contains(&format!("Summary number {towers}.")),
        "a section's call reads its subsections' summaries"
    );
    let answer_prompt = prompts.last().unwrap();
    assert!(answer_prompt.contains("How tall is the SkyScreamer?"));
    assert!(
        !answer_prompt.contains("400 feet"),
        "the answer reads summaries, not the text"
    );

    let t = trace(&run);
    assert_eq!(t.sections.len(), sections);
    assert!(t.sections.iter().all(|s| !s.kept && s.summary.is_some()));
    assert_eq!(t.estimated_calls, sections + 1);
    assert_eq!(t.passages.len(), sections, "every level fits the context");
    assert_eq!(t.passages[0].heading_path, t.sections[0].heading_path);
    let cited = &run.citations.as_array().unwrap()[0];
    assert_eq!(cited["number"], 4);
    assert_eq!(cited["heading_path"], t.passages[3].heading_path.as_str());
    assert!(t
        .passages
        .iter()
        .all(|p| p.path == f.park && p.chunk_id > 0));
}

#[tokio::test]
async fn a_second_question_reuses_the_summaries_and_an_edit_redoes_only_its_sections() {
    let f = Fixture::new().await;
    let sections = f.sections().await;
    let (first, _) = f.ask("How tall is the SkyScreamer?", sections).await;
    assert_eq!(first.llm_calls as usize, sections + 1);

    let (second, llm) = f.ask("When do ferries leave?", 0).await;
    assert_eq!(second.status, RunStatus::Done, "{:?}", second.error);
    assert_eq!(steps(&f.library, &second).await, ["answer"]);
    assert_eq!(llm.unused(), 0);
    let t = trace(&second);
    assert!(t.sections.iter().all(|s| s.kept));
    assert_eq!(t.estimated_calls, 1);
    assert!(second.prompt_tokens * 5 <= first.prompt_tokens);

    // Towers changes: it, Rides above it and the document are summarised again.
    std::fs::write(
        f.dir.path().join("notes/park.md"),
        PARK.replace("400 feet", "410 feet"),
    )
    .unwrap();
    f.library.reconcile_all().await;
    let (third, llm) = f.ask("How tall is the SkyScreamer now?", 3).await;
    assert_eq!(third.status, RunStatus::Done, "{:?}", third.error);
    assert_eq!(steps(&f.library, &third).await.len(), 4);
    let prompts = llm.prompts();
    assert!(prompts[0].contains("410 feet"));
    assert!(prompts[1].contains("Rides open at ten"));
    let t = trace(&third);
    let redone: Vec<&str> = t
        .sections
        .iter()
        .filter(|s| !s.kept)
        .map(|s| s.heading_path.as_str())
        .collect();
    assert_eq!(redone.len(), 3, "{redone:?}");
    assert!(redone.iter().any(|h| h.ends_with("Towers")));
    assert!(t
        .sections
        .iter()
        .any(|s| s.kept && s.heading_path.ends_with("Getting there")));
}

#[tokio::test]
async fn a_document_over_the_call_budget_is_refused_before_any_call() {
    let f = Fixture::new().await;
    let sections = f.sections().await;
    let mut request = f.request("How tall is the SkyScreamer?");
    request.options.insert("max-calls".into(), "3".into());
    let llm = ScriptedLlm::new(Vec::new());
    let (run, _) = ask_with(&f.library, &llm, &request).await;
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.llm_calls, 0);
    let error = run.error.clone().unwrap();
    assert!(
        error.contains(&format!("an estimated {} model calls", sections + 1))
            && error.contains("`max-calls` allows (3)"),
        "{error}"
    );
    assert_eq!(trace(&run).estimated_calls, sections + 1);
}

#[tokio::test]
async fn a_scope_of_more_than_one_document_is_refused() {
    let f = Fixture::new().await;
    let llm = ScriptedLlm::new(Vec::new());
    let mut request = f.request("How tall is the SkyScreamer?");
    request.scope = Scope::default();
    let (run, _) = ask_with(&f.library, &llm, &request).await;
    assert_eq!(run.status, RunStatus::Failed);
    let error = run.error.unwrap();
    assert!(
        error.contains("holds the whole library") && error.contains("--document PATH"),
        "{error}"
    );
    request.scope.paths = vec![folio_store::place(&f.dir.path().join("notes"))];
    let (run, _) = ask_with(&f.library, &llm, &request).await;
    assert!(run.error.unwrap().contains("holds 2 documents"));
}
