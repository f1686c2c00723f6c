//! Keeps the index current while Folio runs: file system events, debounced,
//! become [`Change`]s applied to the index, and folders added elsewhere
//! start being watched at the job runtime's next tick. Edits made while
//! Folio was closed are the job of the reconcile that
//! [`Jobs::run_background`] queues first.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use notify::event::{ModifyKind, RenameMode};
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, DebouncedEvent};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Jobs;
use crate::error::{Error, Result};
use folio_documents::skip::IGNORE_FILE;
use folio_index::pipeline::{Change, PassSummary};

/// Editors write a file in several steps; a quarter second settles most saves
/// while keeping save-to-searchable well under the 2 s target.
const DEBOUNCE: Duration = Duration::from_millis(250);

fn changes_from(events: Vec<DebouncedEvent>) -> (Vec<Change>, bool) {
    let mut changes = Vec::new();
    let mut rescan = false;
    for e in events {
        // Rules of what to skip changed: what is indexed follows them
        // only once every folder is looked at again.
        let rules_changed = e
            .paths
            .iter()
            .any(|p| p.file_name().is_some_and(|n| n == IGNORE_FILE));
        if e.need_rescan() || rules_changed {
            rescan = true;
        }
        match e.kind {
            EventKind::Access(_) => {}
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if e.paths.len() == 2 => changes
                .push(Change::Renamed {
                    from: e.paths[0].clone(),
                    to: e.paths[1].clone(),
                }),
            _ => changes.extend(e.paths.iter().cloned().map(Change::Touched)),
        }
    }
    (changes, rescan)
}

/// Runs until `stop`; the roots are read again on every tick of the job
/// runtime's poller. `on_pass` hears about every applied batch.
pub(super) async fn watch(
    jobs: Jobs<'_>,
    stop: &CancellationToken,
    mut ticks: tokio::sync::watch::Receiver<u64>,
    on_pass: &(dyn Fn(&PassSummary) + Sync),
) -> Result<()> {
    let _watching = jobs.watching();
    let (raw_tx, raw_rx) = std::sync::mpsc::channel::<DebounceEventResult>();
    let mut debouncer =
        new_debouncer(DEBOUNCE, None, raw_tx).map_err(|e| Error::Watch(e.to_string()))?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    // notify delivers on its own thread; hand results to the async side.
    std::thread::spawn(move || {
        while let Ok(r) = raw_rx.recv() {
            if tx.send(r).is_err() {
                break;
            }
        }
    });

    let mut watched: HashSet<PathBuf> = HashSet::new();
    // Roots not on the disk when last looked at.
    let mut missing: HashSet<PathBuf> = HashSet::new();
    loop {
        let roots: HashSet<PathBuf> = jobs
            .library
            .roots()
            .await?
            .into_iter()
            .map(|r| r.path)
            .collect();
        for gone in watched.difference(&roots).cloned().collect::<Vec<_>>() {
            let _ = debouncer.unwatch(&gone);
            watched.remove(&gone);
        }
        // A root gone from the disk (unmounted, moved away) is no longer
        // watched; its index stays. It is watched again once it is back,
        // and reconciled, since anything in it may have changed meanwhile.
        for away in watched
            .iter()
            .filter(|r| !r.exists())
            .cloned()
            .collect::<Vec<_>>()
        {
            let _ = debouncer.unwatch(&away);
            watched.remove(&away);
            missing.insert(away);
        }
        missing.retain(|r| roots.contains(r));
        for new in roots.difference(&watched).cloned().collect::<Vec<_>>() {
            if !new.exists() {
                missing.insert(new);
                continue;
            }
            let mode = if new.is_dir() {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            debouncer
                .watch(&new, mode)
                .map_err(|e| Error::Watch(format!("{}: {e}", new.display())))?;
            if missing.remove(&new) {
                jobs.queue_reconcile().await?;
            }
            watched.insert(new);
        }
        tokio::select! {
            _ = stop.cancelled() => return Ok(()),
            changed = ticks.changed() => if changed.is_err() { return Ok(()) },
            Some(first) = rx.recv() => {
                let mut results = vec![first];
                while let Ok(more) = rx.try_recv() {
                    results.push(more);
                }
                let mut events = Vec::new();
                let mut rescan = false;
                for r in results {
                    match r {
                        Ok(batch) => events.extend(batch),
                        // Lost events (queue overflow, a watch removed under
                        // us): only a full reconcile is safe.
                        Err(_) => rescan = true,
                    }
                }
                let (changes, needs_rescan) = changes_from(events);
                // A full reconcile is a job, run by the ingest lane.
                if rescan || needs_rescan {
                    jobs.queue_reconcile().await?;
                } else if !changes.is_empty() {
                    on_pass(&jobs.apply_changes_until(changes, stop).await?);
                }
            }
        }
    }
}
