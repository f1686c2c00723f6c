//! The engine inside the app: one `Library` plus its background work (the
//! folder watcher and the job runtime, `Jobs::run_background`, with a
//! lane that resumes evaluations) and forwarding engine events to the UI.
//! Saving settings swaps the whole engine; closing the app stops it cleanly,
//! so a running ingest pass commits its batch and resumes on the next start.
//! The engine runs the app's server (`server.rs`) when the library is
//! served. It also keeps how fast its model answered, measured once: a new
//! engine (new settings, perhaps a new model) measures again.

use std::sync::Arc;
use std::time::Duration;

use folio_engine::eval::job::EvalJobs;
use folio_engine::events::EngineEvent;
use folio_engine::llm::pace::Pace;
use folio_engine::{Config, Library};
use tauri::{AppHandle, Emitter};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::OnceCell;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::batching::forward_batched;
use crate::server::AppServer;

/// The UI event that carries batches of [`EngineEvent`]s.
pub const ENGINE_EVENT: &str = "engine";
const ENGINE_BATCH: Duration = Duration::from_millis(100);
/// How long closing the app waits for background work to reach a safe point.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
const WATCH_RETRY: Duration = Duration::from_secs(5);

pub struct Engine {
    pub library: Arc<Library>,
    pub config: Config,
    /// The configured model's pace, once measured: timing it takes seconds
    /// of the model's full attention, so it happens once per engine, and a
    /// second caller waits for the first's measurement.
    pub pace: Arc<OnceCell<Pace>>,
    /// The library served to other apps, when Settings' switch says so.
    pub server: AppServer,
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Engine {
    pub async fn start(app: AppHandle, config: Config) -> folio_engine::Result<Engine> {
        let library = Arc::new(Library::open(config.clone()).await?);
        let stop = CancellationToken::new();
        let tasks = vec![
            tokio::spawn(forward_engine_events(app, library.clone(), stop.clone())),
            tokio::spawn(run_background(library.clone(), stop.clone())),
        ];
        let server = AppServer::default();
        server.follow(&library).await;
        Ok(Engine {
            library,
            config,
            pace: Arc::default(),
            server,
            stop,
            tasks,
        })
    }

    /// Stops the watcher and jobs at their next safe point and closes the
    /// database.
    pub async fn stop(self) {
        self.server.stop().await;
        self.stop.cancel();
        self.library.stop_token().cancel();
        for task in self.tasks {
            if tokio::time::timeout(SHUTDOWN_GRACE, task).await.is_err() {
                eprintln!("folio: background work did not stop within {SHUTDOWN_GRACE:?}; its job resumes on the next start");
            }
        }
        self.library.close().await;
    }
}

async fn forward_engine_events(app: AppHandle, library: Arc<Library>, stop: CancellationToken) {
    let mut events = library.subscribe();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<EngineEvent>();
    let pump = async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                event = events.recv() => match event {
                    Ok(event) => if tx.send(event).is_err() { break },
                    // Progress events are cumulative: a skipped one is superseded.
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                },
            }
        }
    };
    let forward = forward_batched(rx, ENGINE_BATCH, |batch| {
        if let Err(e) = app.emit(ENGINE_EVENT, batch) {
            eprintln!("folio: cannot send engine events to the window: {e}");
        }
    });
    tokio::join!(pump, forward);
}

/// Runs `work` until it ends cleanly or the app closes; a failure is
/// reported and `work` started again after [`WATCH_RETRY`].
async fn retry_until_stopped<E, F, Fut>(what: &str, stop: &CancellationToken, mut work: F)
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), E>>,
{
    while !stop.is_cancelled() {
        match work().await {
            Ok(()) => break,
            Err(e) => {
                eprintln!("folio: {what} stopped: {e}; retrying in {WATCH_RETRY:?}");
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(WATCH_RETRY) => {}
                }
            }
        }
    }
}

/// Runs the watcher and the job runtime until the app closes. A failure,
/// such as a folder that cannot be watched, is retried.
async fn run_background(library: Arc<Library>, stop: CancellationToken) {
    if let Err(e) = library.warm_vectors().await {
        eprintln!("folio: search falls back to the on-disk index: {e}");
    }
    let (library, stopping) = (&library, &stop);
    retry_until_stopped("background work", &stop, || async move {
        library
            .jobs()
            .run_background(stopping.clone().cancelled_owned(), &|_| {}, &[&EvalJobs])
            .await
    })
    .await;
}
