//! What was asked and answered: stored runs and the threads they form, as
//! [`Library::runs`] and [`Library::threads`] hand them out. Both only read
//! and delete what the answering methods stored; exporting renders it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::Library;
use crate::error::{Error, Result};
use folio_methods::{Citation, MethodError};
use folio_store::{LlmCallRow, RunRecord, RunStatus, Thread, ThreadSummary};

impl Library {
    /// Stored runs: history, their model calls, export.
    pub fn runs(&self) -> Runs<'_> {
        Runs { library: self }
    }

    /// Conversations: a thread of runs, each following on from the last.
    pub fn threads(&self) -> Threads<'_> {
        Threads { library: self }
    }
}

/// The stored runs of one library, as [`Library::runs`] hands them out.
#[derive(Clone, Copy)]
pub struct Runs<'a> {
    library: &'a Library,
}

impl<'a> Runs<'a> {
    /// Run `id`, as history and export read it.
    pub async fn get(self, id: i64) -> Result<RunRecord> {
        self.library
            .store
            .run(id)
            .await?
            .ok_or(Error::RunNotFound(id))
    }

    /// Newest first; `text` filters by question and answer.
    pub async fn list(self, text: Option<&str>, limit: i64) -> Result<Vec<RunRecord>> {
        Ok(self.library.store.runs(text, limit).await?)
    }

    /// The model calls run `id` made, in order.
    pub async fn calls(self, id: i64) -> Result<Vec<LlmCallRow>> {
        Ok(self.library.store.llm_calls(id).await?)
    }

    /// Writes run `id` as markdown to exactly `out`.
    pub async fn export(self, id: i64, out: &Path) -> Result<PathBuf> {
        Ok(crate::export::write_file(out, &self.markdown(id).await?)?)
    }

    /// Run `id` as the markdown [`Runs::export`] writes.
    pub async fn markdown(self, id: i64) -> Result<String> {
        let run = self.get(id).await?;
        let calls = self.calls(id).await?;
        let gone = self.gone_sources(std::slice::from_ref(&run)).await?;
        Ok(crate::export::render(&run, &calls, &gone))
    }

    /// The files `runs` cite that are no longer in the library: a thread
    /// outlives the documents it was answered from, and says so.
    pub async fn gone_sources(self, runs: &[RunRecord]) -> Result<BTreeSet<String>> {
        let cited: BTreeSet<String> = runs
            .iter()
            .flat_map(|run| {
                serde_json::from_value::<Vec<Citation>>(run.citations.clone()).unwrap_or_default()
            })
            .map(|c| c.path)
            .collect();
        let mut gone = BTreeSet::new();
        for path in cited {
            if self.library.store.document(&path).await?.is_none() {
                gone.insert(path);
            }
        }
        Ok(gone)
    }
}

/// The threads of one library, as [`Library::threads`] hands them out.
#[derive(Clone, Copy)]
pub struct Threads<'a> {
    library: &'a Library,
}

impl<'a> Threads<'a> {
    /// The most recently active threads first; `text` filters by any
    /// turn's question and answer.
    pub async fn list(self, text: Option<&str>, limit: i64) -> Result<Vec<ThreadSummary>> {
        Ok(self.library.store.threads(text, limit).await?)
    }

    /// Thread `id` with every turn it follows on, oldest first.
    ///
    /// A branch's runs start with the turns it branched after; their
    /// `thread_id` names the thread they belong to.
    pub async fn get(self, id: i64) -> Result<Thread> {
        Ok(self
            .library
            .store
            .whole_thread(id)
            .await?
            .ok_or(MethodError::UnknownThread(id))?)
    }

    /// Deletes thread `id` and its turns, unless one is still being
    /// answered. A branch's turns go; the turns it branched after stay
    /// with their own thread.
    pub async fn delete(self, id: i64) -> Result<()> {
        let store = &self.library.store;
        let own = store
            .thread(id)
            .await?
            .ok_or(MethodError::UnknownThread(id))?;
        if let Some(run) = own.runs.iter().find(|r| r.status == RunStatus::Running) {
            return Err(Error::RunInProgress(run.id));
        }
        store.delete_thread(id).await?;
        Ok(())
    }

    /// Writes thread `id` whole as one markdown file to exactly `out`.
    pub async fn export(self, id: i64, out: &Path) -> Result<PathBuf> {
        Ok(crate::export::write_file(out, &self.markdown(id).await?)?)
    }

    /// Thread `id` as the markdown [`Threads::export`] writes.
    pub async fn markdown(self, id: i64) -> Result<String> {
        let thread = self.get(id).await?;
        let runs = self.library.runs();
        let mut calls = Vec::with_capacity(thread.runs.len());
        for run in &thread.runs {
            calls.push(runs.calls(run.id).await?);
        }
        let gone = runs.gone_sources(&thread.runs).await?;
        Ok(crate::export::render_thread(&thread, &calls, &gone))
    }
}
