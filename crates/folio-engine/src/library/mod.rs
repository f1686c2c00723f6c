//! The engine's front door: one `Library` per data directory. The CLI and the
//! desktop shell call these methods and nothing below them, so both behave the
//! same. It owns the background jobs (ingestion, the gain graph; their
//! runtime is `jobs.rs`) and hands methods the retrieval service, which
//! loads the embedding model on first use, so `status` and `tree` start
//! instantly.

mod collections;
mod history;
mod jobs;
mod watcher;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::{broadcast, OnceCell};

use crate::config::Config;
use crate::error::{Error, Result};
use folio_core::events::{EngineEvent, EventSender};
use folio_core::path_text;
use folio_documents::loaders::Format;
use folio_documents::structure_tree::StructureTree;
use folio_index::graph::{GraphStatus, GRAPH_JOB};
use folio_index::pipeline::Root;
use folio_index::quarantine::ReadingLog;
use folio_llm::prompts::{Prompt, PromptError, Prompts};
use folio_llm::Llm;
use folio_methods::runner::{Answering, AskRequest};
use folio_methods::EventSink;
use folio_retrieve::{RetrievalService, SearchHit, SearchMode};
use folio_store::{
    DocumentPage, DocumentRecord, FolderSummary, IndexCounts, Job, JobState, NoteLinks,
    PassageBoxes, RunRecord, Scope, Store, StoredChunk, TagCount,
};
use jobs::{IngestPayload, JobControl};
use tokio_util::sync::CancellationToken;

/// Every step's prompt (each method's, the thread rewrite's, the gain
/// graph's grades and the judge's) with the user's overrides from `dir`.
pub fn load_prompts(dir: &Path) -> std::result::Result<Prompts, PromptError> {
    let steps: Vec<&'static Prompt> = folio_methods::prompts()
        .chain(folio_llm::rubric::PROMPTS.iter().copied())
        .chain([&crate::eval::judge::JUDGE])
        .collect();
    Prompts::load(Some(dir), &steps)
}

pub use collections::Collections;
pub use history::{Runs, Threads};
pub use jobs::{JobKind, Jobs, Pass, WatchingGuard, INGEST_JOB};

pub struct Library {
    config: Config,
    /// Reached by the evaluation in this crate; outside it, through the
    /// handles.
    pub(crate) store: Store,
    events: EventSender,
    /// Cancelled when the process shuts down (Ctrl-C, the window closing)
    /// or the work it was opened for is cancelled: every pass stops at its
    /// next batch and its job resumes later.
    stop: CancellationToken,
    control: JobControl,
    /// Where this process marks the files it reads, so a file that kills
    /// it is set aside by the next start (`folio_index::quarantine`).
    reading: Arc<ReadingLog>,
    pub(crate) retrieval: RetrievalService,
    llm: OnceCell<Arc<dyn Llm>>,
    prompts: OnceCell<Arc<Prompts>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub data_dir: String,
    pub folders: Vec<FolderSummary>,
    pub counts: IndexCounts,
    pub documents: Vec<DocumentRecord>,
    pub errors: Vec<FileError>,
    pub jobs: Vec<Job>,
}

/// What the library view shows: small however many documents there are
/// (documents themselves come a page at a time).
#[derive(Debug, Clone, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct LibraryOverview {
    pub data_dir: String,
    pub folders: Vec<FolderSummary>,
    pub counts: IndexCounts,
    /// The most recent failures, with reasons.
    pub errors: Vec<FileError>,
    pub jobs: Vec<Job>,
    pub jobs_paused: bool,
    /// Whether this process watches the folders for changes now.
    pub watching: bool,
}

/// The settings key of [`Library::serve_address`].
const SERVE_ADDRESS_KEY: &str = "serve_address";

/// How many failures the overview lists; the rest are counted.
const OVERVIEW_ERRORS: i64 = 200;

#[derive(Debug, Clone, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct FileError {
    pub path: String,
    pub error: String,
    /// Folio stopped while reading it alone; `retry` reads it again.
    pub set_aside: bool,
}

impl FileError {
    /// The error a document is stored with, if any.
    fn of(d: &DocumentRecord) -> Option<FileError> {
        Some(FileError {
            path: d.path.clone(),
            error: d.error.clone()?,
            set_aside: d.set_aside,
        })
    }
}

#[derive(Debug, Clone, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct DocumentTree {
    pub document: DocumentRecord,
    pub tree: StructureTree,
}

/// What reading a file under a size limit found.
enum BoundedRead {
    Bytes(Vec<u8>),
    /// The file is (or grew while being read to) at least this many bytes.
    Over(u64),
    Unreadable,
}

/// `file`'s bytes if it holds at most `limit`; never reads more than one
/// byte past it.
fn read_at_most(file: &Path, limit: u64) -> BoundedRead {
    use std::io::Read as _;
    let Ok(handle) = std::fs::File::open(file) else {
        return BoundedRead::Unreadable;
    };
    let Ok(size) = handle.metadata().map(|m| m.len()) else {
        return BoundedRead::Unreadable;
    };
    if size > limit {
        return BoundedRead::Over(size);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    if handle.take(limit + 1).read_to_end(&mut bytes).is_err() {
        return BoundedRead::Unreadable;
    }
    if bytes.len() as u64 > limit {
        return BoundedRead::Over(bytes.len() as u64);
    }
    BoundedRead::Bytes(bytes)
}

/// Resolves symlinks and `..` so one file has one path in the index.
fn canonical(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|_| Error::NotFound(path.to_path_buf()))
}

impl Library {
    pub async fn open(config: Config) -> Result<Library> {
        Library::open_with_stop(config, CancellationToken::new()).await
    }

    /// [`Library::open`] for work that `stop` cancels: an evaluation opens
    /// its own index under the evaluation's token.
    pub async fn open_with_stop(config: Config, stop: CancellationToken) -> Result<Library> {
        std::fs::create_dir_all(&config.data_dir).map_err(|source| Error::DataDir {
            path: config.data_dir.clone(),
            source,
        })?;
        let store = Store::open(&config.database_path()).await?;
        let (events, _) = broadcast::channel(1024);
        let reading = ReadingLog::shared(config.data_dir.join("reading"));
        Ok(Library {
            retrieval: RetrievalService::new(
                store.clone(),
                config.embedding_source(),
                config.vector_copy_settings(),
                events.clone(),
            ),
            config,
            store,
            events,
            stop,
            control: JobControl::default(),
            reading,
            llm: OnceCell::new(),
            prompts: OnceCell::new(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The store under the library, for the benchmarks that time it and
    /// the tests that look inside it; front ends use the handles
    /// ([`Library::runs`], [`Library::threads`], [`Library::collections`],
    /// [`Library::jobs`]).
    #[cfg(feature = "internals")]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Closes the database (checkpointing its log), as the app does when
    /// its window closes.
    pub async fn close(&self) {
        self.store.close().await;
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    /// Sends `event` to every subscriber: how a job of a kind defined above
    /// the library (the evaluation) reports its progress.
    pub fn publish(&self, event: EngineEvent) {
        // No subscriber is not an error: nobody is watching.
        let _ = self.events.send(event);
    }

    /// Cancelling it stops running passes at their next batch boundary;
    /// the work done so far is committed and the job resumes later.
    pub fn stop_token(&self) -> &CancellationToken {
        &self.stop
    }

    /// Everything methods and searches read from the index, for the
    /// benchmarks that time it and the tests that look inside it.
    #[cfg(feature = "internals")]
    pub fn retrieval(&self) -> &RetrievalService {
        &self.retrieval
    }

    /// Loads the vectors searches read (the saved approximate index, or an
    /// exact copy), so the first question does not wait for them.
    pub async fn warm_vectors(&self) -> Result<()> {
        Ok(self.retrieval.warm_vectors().await?)
    }

    /// Registers folders or files for watching and queues a job that indexes
    /// them. Nothing is read yet: run the job (or let `folio watch` do it).
    pub async fn add(&self, paths: &[PathBuf]) -> Result<i64> {
        let mut roots = Vec::new();
        for p in paths {
            let path = canonical(p)?;
            let path = path_text::to_text(&path);
            self.store.add_folder(&path).await?;
            roots.push(path);
        }
        let payload = serde_json::to_value(IngestPayload { roots }).unwrap_or_default();
        Ok(self
            .store
            .create_job(INGEST_JOB, &payload, JobState::Queued)
            .await?)
    }

    pub async fn roots(&self) -> Result<Vec<Root>> {
        Ok(self
            .store
            .folders()
            .await?
            .into_iter()
            .map(|f| Root {
                folder_id: f.id,
                path: path_text::to_path(&f.path),
            })
            .collect())
    }

    /// Stops watching a folder and forgets everything indexed from it.
    pub async fn remove(&self, path: &Path) -> Result<()> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.store.remove_folder(&path_text::to_text(&key)).await? {
            Ok(())
        } else {
            Err(Error::NotWatched(path.to_path_buf()))
        }
    }

    pub async fn status(&self) -> Result<Status> {
        let documents = self.store.all_documents().await?;
        let errors = documents.iter().filter_map(FileError::of).collect();
        Ok(Status {
            data_dir: self.config.data_dir.to_string_lossy().into_owned(),
            folders: self.folder_summaries().await?,
            counts: self.store.counts().await?,
            documents,
            errors,
            jobs: self.store.jobs(20).await?,
        })
    }

    /// The watched folders, each marked missing when it is gone from the
    /// disk (the reconcile and the watcher keep a missing folder's index).
    async fn folder_summaries(&self) -> Result<Vec<FolderSummary>> {
        let mut folders = self.store.folder_summaries().await?;
        for folder in &mut folders {
            folder.missing = !path_text::to_path(&folder.path).exists();
        }
        Ok(folders)
    }

    pub async fn overview(&self) -> Result<LibraryOverview> {
        let errors = self.store.failed_documents(OVERVIEW_ERRORS).await?;
        Ok(LibraryOverview {
            data_dir: self.config.data_dir.to_string_lossy().into_owned(),
            folders: self.folder_summaries().await?,
            counts: self.store.counts().await?,
            errors: errors.iter().filter_map(FileError::of).collect(),
            jobs: self.store.jobs(20).await?,
            jobs_paused: self.jobs().paused_for_library().await?,
            watching: self.control.watching.load(Ordering::Relaxed),
        })
    }

    /// A page of the documents of the watched folder at `folder` (as listed).
    pub async fn folder_documents(
        &self,
        folder: &str,
        offset: i64,
        limit: i64,
    ) -> Result<DocumentPage> {
        let id = self
            .store
            .folders()
            .await?
            .into_iter()
            .find(|f| f.path == folder)
            .ok_or_else(|| Error::NotWatched(path_text::to_path(folder)))?
            .id;
        Ok(self.store.folder_documents(id, offset, limit).await?)
    }

    /// A note's aliases, tags, the links it makes and the links to it,
    /// resolved against the library as it is now (`folio links`).
    pub async fn links(&self, path: &Path) -> Result<NoteLinks> {
        let document = self.indexed(path).await?;
        Ok(self.store.note_links(document.id).await?)
    }

    /// Every tag of the library's notes, with how many carry it: what a
    /// `--tag` scope can name.
    pub async fn tags(&self) -> Result<Vec<TagCount>> {
        Ok(self.store.tags().await?)
    }

    /// [`Library::links`] of the indexed document `id`.
    pub async fn links_of(&self, id: i64) -> Result<NoteLinks> {
        let path = self.store.document_path(id).await?;
        let path = path.ok_or(Error::DocumentNotFound(id))?;
        self.links(&path_text::to_path(&path)).await
    }

    pub async fn tree(&self, path: &Path) -> Result<DocumentTree> {
        let document = self.indexed(path).await?;
        let tree = self.store.structure_tree(document.id).await?;
        Ok(DocumentTree { document, tree })
    }

    /// The address the app serves this library on whenever it opens it
    /// (Settings' server switch); `None` when it does not serve it.
    pub async fn serve_address(&self) -> Result<Option<String>> {
        Ok(self
            .store
            .setting(SERVE_ADDRESS_KEY)
            .await?
            .filter(|a| !a.is_empty()))
    }

    /// Remembers the switch: serve at `address`, or (`None`) do not.
    pub async fn set_serve_address(&self, address: Option<&str>) -> Result<()> {
        Ok(self
            .store
            .set_setting(SERVE_ADDRESS_KEY, address.unwrap_or_default())
            .await?)
    }

    /// An indexed document and its structure tree, named by id: how the
    /// server lets a client read a document without naming a file.
    pub async fn document(&self, id: i64) -> Result<DocumentTree> {
        let missing = || Error::DocumentNotFound(id);
        let path = self.store.document_path(id).await?.ok_or_else(missing)?;
        let document = self
            .store
            .document(&path)
            .await?
            .filter(|d| d.status == "indexed")
            .ok_or_else(missing)?;
        let tree = self.store.structure_tree(document.id).await?;
        Ok(DocumentTree { document, tree })
    }

    /// An indexed document's text, as markdown from its structure tree.
    pub async fn document_text(&self, id: i64) -> Result<String> {
        Ok(self.document(id).await?.tree.markdown())
    }

    /// One passage (a chunk, as search finds and citations name it) with
    /// its text and where it lies.
    pub async fn passage(&self, chunk_id: i64) -> Result<StoredChunk> {
        self.store
            .chunks_by_id(&[chunk_id])
            .await?
            .pop()
            .ok_or(Error::PassageNotFound(chunk_id))
    }

    /// The bytes of an indexed PDF, for the app's page viewer. Only a file
    /// the library holds as a PDF is read, and only under the size limit:
    /// the caller names a document, not a file to open. The read itself
    /// stops one byte past the limit, so a file that grows after its size
    /// was checked is refused, not read whole.
    pub async fn pdf_bytes(&self, path: &Path) -> Result<Vec<u8>> {
        let document = self.pdf(path).await?;
        let limit = self.config.max_file_size;
        let file = path_text::to_path(&document.path);
        let read = tokio::task::spawn_blocking(move || read_at_most(&file, limit))
            .await
            .map_err(|e| Error::Task(e.to_string()))?;
        match read {
            BoundedRead::Bytes(bytes) => Ok(bytes),
            BoundedRead::Over(size) => Err(Error::TooLarge {
                path: path.to_path_buf(),
                size,
                limit,
            }),
            BoundedRead::Unreadable => Err(Error::NotFound(path.to_path_buf())),
        }
    }

    /// Where the passage of an indexed PDF at `span` on `page` is drawn, a
    /// box per line, or why that is not known (see [`PassageBoxes`]).
    pub async fn passage_boxes(
        &self,
        path: &Path,
        page: u32,
        span_start: i64,
        span_end: i64,
    ) -> Result<PassageBoxes> {
        let document = self.pdf(path).await?;
        Ok(self
            .store
            .passage_boxes(document.id, page, span_start, span_end)
            .await?)
    }

    async fn indexed(&self, path: &Path) -> Result<DocumentRecord> {
        let key = canonical(path)?;
        self.store
            .document(&path_text::to_text(&key))
            .await?
            .filter(|d| d.status == "indexed")
            .ok_or_else(|| Error::NotIndexed(path.to_path_buf()))
    }

    async fn pdf(&self, path: &Path) -> Result<DocumentRecord> {
        let document = self.indexed(path).await?;
        if document.format.as_deref() != Some(Format::Pdf.as_str()) {
            return Err(Error::NotPdf(path.to_path_buf()));
        }
        Ok(document)
    }

    /// The configured language model, loaded (or connected) on first use.
    pub async fn llm(&self) -> Result<Arc<dyn Llm>> {
        self.llm
            .get_or_try_init(|| folio_llm::connect(&self.config.llm))
            .await
            .cloned()
            .map_err(Error::from)
    }

    /// The prompt templates, with the user's overrides, checked on first use.
    pub async fn prompts(&self) -> Result<Arc<Prompts>> {
        self.prompts
            .get_or_try_init(|| async { load_prompts(&self.config.prompts_dir).map(Arc::new) })
            .await
            .cloned()
            .map_err(Error::from)
    }

    /// Answers `request` with its method and the configured model, and
    /// stores the run, failed or not.
    pub async fn ask(
        &self,
        request: &AskRequest,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<RunRecord> {
        let llm = self.llm().await?;
        self.ask_with(llm.as_ref(), request, events, cancel).await
    }

    /// [`Library::ask`] with another model than the configured one, such as
    /// a scripted model in tests of a method's control flow.
    pub async fn ask_with(
        &self,
        llm: &dyn Llm,
        request: &AskRequest,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<RunRecord> {
        let prompts = self.prompts().await?;
        let request = AskRequest {
            scope: request.scope.placed(),
            ..request.clone()
        };
        let request = &request;
        let calibration = self
            .config
            .calibrations()
            .of(&self.config.llm)
            .map_err(|e| e.to_string());
        let answering = Answering {
            retrieval: &self.retrieval,
            store: &self.store,
            llm,
            settings: &self.config.llm,
            calibration: calibration
                .as_ref()
                .map(Option::as_ref)
                .map_err(String::as_str),
            prompts: &prompts,
        };
        Ok(folio_methods::runner::ask(&answering, request, events, cancel).await?)
    }

    /// The chunks `mode` finds for `query` within `scope`, each with a
    /// snippet: what `folio search` lists.
    pub async fn search(
        &self,
        query: &str,
        k: usize,
        mode: SearchMode,
        scope: &Scope,
    ) -> Result<Vec<SearchHit>> {
        let documents = self.store.resolve_scope(&scope.placed()).await?;
        Ok(self
            .retrieval
            .search(query, k, mode, documents.as_ref())
            .await?)
    }

    /// How many documents `scope` holds (`None` for the whole library), or
    /// why it cannot be used: what a scope picker shows as it is set.
    pub async fn scope_size(&self, scope: &Scope) -> Result<Option<usize>> {
        Ok(self
            .store
            .resolve_scope(&scope.placed())
            .await?
            .map(|documents| documents.len()))
    }

    /// How a path a person typed is named in a scope or a collection: its
    /// canonical form if it exists, else the path made absolute (a folder
    /// since deleted can still be named, and is then reported as not
    /// indexed).
    pub fn place(path: &Path) -> String {
        folio_store::place(path)
    }

    /// Coverage, cost and jobs of every built graph.
    pub async fn graph_status(&self) -> Result<GraphStatus> {
        let chunks = self.store.embedded_chunks().await?;
        let mut rubrics = Vec::new();
        for rubric in self.store.built_rubrics().await? {
            rubrics.push(self.store.rubric_status(rubric, chunks).await?);
        }
        let jobs = self
            .store
            .jobs(200)
            .await?
            .into_iter()
            .filter(|j| j.kind == GRAPH_JOB)
            .take(10)
            .collect();
        Ok(GraphStatus {
            chunks,
            rubrics,
            jobs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{ask_with, library, says, ScriptedLlm};
    use folio_index::graph::{GraphBuildOptions, Rubric};

    #[tokio::test]
    async fn history_is_searchable_and_threads_can_be_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        let llm = ScriptedLlm::new(vec![says("Borrowing lends a value.")]);
        let request = AskRequest::new("What is Folio?", "llm-only");
        let (run, _) = ask_with(&library, &llm, &request).await;
        let found = |text: &'static str| {
            let library = &library;
            async move { library.runs().list(Some(text), 10).await.unwrap().len() }
        };
        assert_eq!(
            found("what IS folio").await,
            1,
            "questions match, case-insensitively"
        );
        assert_eq!(found("lends").await, 1, "answers match");
        assert_eq!(found("ownership").await, 0);
        assert_eq!(found("  ").await, 1, "a blank search lists everything");
        let threads = library.threads().list(Some("LENDS"), 10).await.unwrap();
        assert_eq!(threads.len(), 1, "threads are found by their turns' text");
        library.threads().delete(run.thread_id).await.unwrap();
        assert!(library.runs().list(None, 10).await.unwrap().is_empty());
        assert!(library.runs().calls(run.id).await.unwrap().is_empty());
        let again = library.threads().delete(run.thread_id).await.unwrap_err();
        assert!(
            again.is_user_error() && again.to_string().contains("no thread"),
            "{again}"
        );
    }

    #[tokio::test]
    async fn a_waiting_graph_job_is_reused_and_options_out_of_range_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(dir.path()).await;
        let job = library
            .jobs()
            .queue_graph_build(GraphBuildOptions::default())
            .await
            .unwrap();
        assert_eq!(
            library
                .jobs()
                .queue_graph_build(GraphBuildOptions::default())
                .await
                .unwrap(),
            job,
            "a waiting job with the same options is reused"
        );
        let none = GraphBuildOptions {
            rubric: Rubric::Coarse,
            n: 0,
        };
        assert!(library.jobs().queue_graph_build(none).await.is_err());
    }

    /// Every template under `prompts/` is some step's, and every step's
    /// template is there: a file no step declares would be dead text.
    #[test]
    fn every_prompt_file_is_a_declared_step() {
        let root = crate::config::checkout().join("prompts");
        let mut on_disk: Vec<String> = walkdir::WalkDir::new(&root)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let relative = e.path().strip_prefix(&root).unwrap();
                relative.to_string_lossy().replace('\\', "/")
            })
            .collect();
        on_disk.sort();
        let empty = tempfile::tempdir().unwrap();
        let mut declared: Vec<String> = load_prompts(empty.path())
            .unwrap()
            .sources()
            .iter()
            .map(|s| s.file.to_string())
            .collect();
        declared.sort();
        assert_eq!(declared, on_disk);
    }

    /// A FIFO says it is empty and then delivers whatever is written to it,
    /// like a file that grows after its size was checked.
    #[test]
    fn a_read_stops_one_byte_past_the_limit_whatever_the_size_said() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("growing.pdf");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: name is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Write as _;
                let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                // The reader closes the pipe once it has enough.
                let _ = pipe.write_all(&[b'%'; 1 << 20]);
            })
        };
        match read_at_most(&fifo, 1000) {
            BoundedRead::Over(size) => assert_eq!(size, 1001),
            BoundedRead::Bytes(b) => panic!("read {} bytes past a 1000-byte limit", b.len()),
            BoundedRead::Unreadable => panic!("the FIFO could not be read"),
        }
        writer.join().unwrap();
    }

    #[test]
    fn a_file_within_the_limit_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("small.pdf");
        std::fs::write(&file, b"%PDF-1.4").unwrap();
        assert!(matches!(read_at_most(&file, 8), BoundedRead::Bytes(b) if b == b"%PDF-1.4"));
        assert!(matches!(read_at_most(&file, 7), BoundedRead::Over(8)));
        assert!(matches!(
            read_at_most(&dir.path().join("gone.pdf"), 8),
            BoundedRead::Unreadable
        ));
    }
}
