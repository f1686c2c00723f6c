//! Waiting in tests for what background work does in its own time.
#![allow(dead_code)]

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use folio_engine::eval::job::EvalJobs;
use folio_engine::Library;

/// The library's background work (watcher and job runtime, evaluations'
/// lane included), as the app and `folio watch` run it, until
/// [`Background::stop`].
pub struct Background {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<folio_engine::Result<()>>,
}

impl Background {
    pub fn start(library: &Arc<Library>) -> Background {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let library = library.clone();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            library
                .jobs()
                .run_background(shutdown, &|_| {}, &[&EvalJobs])
                .await
        });
        Background { stop, task }
    }

    /// Stops the background work at its next safe point and waits for it.
    pub async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap().unwrap();
    }
}

/// Polls until `check` holds, failing after a generous deadline (the
/// deadline guards against hangs; speed is measured by `folio bench`).
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
