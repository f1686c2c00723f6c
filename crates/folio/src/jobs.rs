//! `folio jobs`: the library's background jobs (indexing, the gain graph,
//! evaluations) and the hold on them. A pause or a resume holds for the
//! library, so the app and `folio watch` take it up within a couple of
//! seconds; a cancel stops one job wherever it runs.

use anyhow::Result;
use clap::Subcommand;

use folio_engine::documents::structure_tree::preview;
use folio_engine::store::Job;
use folio_engine::Library;

use crate::print_json;

#[derive(Subcommand)]
pub enum JobsCommand {
    /// Pause background work on this library, in every process: the
    /// running job stops at its next batch and keeps its work, and nothing
    /// queued starts until `folio jobs resume`, restarts included.
    Pause,
    /// Let paused background work run again.
    Resume,
    /// Cancel a queued, paused or running job; what it indexed stays.
    Cancel { job: i64 },
}

pub async fn run(library: &Library, command: Option<JobsCommand>, json: bool) -> Result<()> {
    let jobs = library.jobs();
    let (done, said) = match command {
        None => return list(library, json).await,
        Some(JobsCommand::Pause) => {
            jobs.pause().await?;
            (
                serde_json::json!({ "paused": true }),
                "paused background work; the app and `folio watch` stop their job at its next \
                 batch, and `folio jobs resume` lets it run again"
                    .to_string(),
            )
        }
        Some(JobsCommand::Resume) => {
            jobs.resume().await?;
            (
                serde_json::json!({ "paused": false }),
                "resumed background work; the app or `folio watch` runs what is queued".to_string(),
            )
        }
        Some(JobsCommand::Cancel { job }) => {
            jobs.cancel(job).await?;
            (
                serde_json::json!({ "cancelled": job }),
                format!("cancelled job {job}; what it did so far is kept"),
            )
        }
    };
    match json {
        true => print_json(&done),
        false => {
            println!("{said}");
            Ok(())
        }
    }
}

async fn list(library: &Library, json: bool) -> Result<()> {
    let paused = library.jobs().paused_for_library().await?;
    let jobs = library.jobs().list(20).await?;
    if json {
        return print_json(&serde_json::json!({ "paused": paused, "jobs": jobs }));
    }
    match paused {
        true => println!("background work is paused; `folio jobs resume` lets it run"),
        false => println!("background work runs in the app or `folio watch`"),
    }
    if jobs.is_empty() {
        println!("no jobs yet");
    }
    for job in &jobs {
        println!("  {}", job_line(job));
    }
    Ok(())
}

/// `#12 ingest running 340/700 · 48.2/s · eta 7s`.
pub fn job_line(j: &Job) -> String {
    let state = if j.interrupted {
        "interrupted".to_string()
    } else {
        format!("{:?}", j.state).to_lowercase()
    };
    let rate = j.rate.map(|r| format!(" · {r:.1}/s")).unwrap_or_default();
    let eta = j
        .eta_seconds
        .map(|e| format!(" · eta {e:.0}s"))
        .unwrap_or_default();
    let err = j
        .error
        .as_deref()
        .map(|e| format!(" · {}", preview(e, 80)))
        .unwrap_or_default();
    format!(
        "#{} {} {} {}/{}{rate}{eta}{err}",
        j.id, j.kind, state, j.done, j.total
    )
}
