//! The retrieval service: everything a method may read from the index, in
//! one place. It owns the embedding model (loaded on first use, so `status`
//! and `tree` start instantly), the in-memory vector copy of long-lived
//! processes, the walkable gain graphs, and the chunk, document and tree
//! look-ups. Methods reach the index only through it, never through the
//! library, so retrieval knows nothing of who asks.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::OnceCell;

use super::gain_walk::{WalkGraph, Weights};
use super::memory_vectors::{CopySettings, CopyStatus, MemoryVectors};
use super::ranker::{seeds, Follow, GainWalk, Ranker, Ranking, WalkRecord, WalkStats};
use super::{Result, RetrieveError, SearchHit, SearchMode, VectorCopy};
use folio_core::events::{EngineEvent, EventSender};
use folio_documents::structure_tree::StructureTree;
use folio_embed::{Embedder, EmbeddingSource};
use folio_llm::rubric::Rubric;
use folio_store::{
    ChunkRecord, DocumentSet, LinkedChunk, RubricStatus, Store, StoredChunk, VectorSpace,
};

pub struct RetrievalService {
    store: Store,
    embedding: EmbeddingSource,
    /// Where converting an older index's vectors reports its progress.
    events: EventSender,
    model: OnceCell<(Arc<Embedder>, VectorSpace)>,
    vectors: Arc<MemoryVectors>,
    /// Walkable copies of the information-gain graphs, per rubric, with
    /// and without link edges.
    graphs: tokio::sync::Mutex<HashMap<(Rubric, bool), Arc<WalkGraph>>>,
    /// The last scoped part of a graph walked: a thread asks within one
    /// scope turn after turn.
    scoped_graph: tokio::sync::Mutex<Option<ScopedGraph>>,
}

struct ScopedGraph {
    rubric: Rubric,
    links: bool,
    documents: DocumentSet,
    graph: Arc<WalkGraph>,
}

/// A document as routing sees it: its structure tree and its chunks (each
/// naming the tree nodes it covers).
pub struct DocumentParts {
    pub tree: StructureTree,
    pub chunks: Vec<ChunkRecord>,
}

impl RetrievalService {
    pub fn new(
        store: Store,
        embedding: EmbeddingSource,
        copy: CopySettings,
        events: EventSender,
    ) -> RetrievalService {
        RetrievalService {
            store,
            embedding,
            events,
            model: OnceCell::new(),
            vectors: Arc::new(MemoryVectors::new(copy)),
            graphs: Default::default(),
            scoped_graph: Default::default(),
        }
    }

    /// The embedding model and the vector space its vectors live in, loaded
    /// on first use; a model other than the stored vectors' rebuilds the
    /// vector table (the store marks every chunk for re-embedding). An index
    /// made before int8 vectors has them converted here, so nothing reads
    /// or writes vectors before they are all in one table.
    pub async fn model(&self) -> Result<&(Arc<Embedder>, VectorSpace)> {
        self.model
            .get_or_try_init(|| async {
                let source = self.embedding.clone();
                let embedder = tokio::task::spawn_blocking(move || Embedder::load(&source))
                    .await
                    .map_err(|e| RetrieveError::Task(e.to_string()))??;
                let (space, _) = self
                    .store
                    .ensure_vector_space(embedder.name(), embedder.dim())
                    .await?;
                if self.store.vectors_need_upgrade().await? {
                    self.store
                        .upgrade_vectors(|progress| {
                            // Nobody listening is fine: the work goes on.
                            let _ = self.events.send(EngineEvent::VectorsUpgrading { progress });
                        })
                        .await?;
                }
                Ok((Arc::new(embedder), space))
            })
            .await
    }

    /// For processes that answer many queries (the watcher, the app,
    /// evaluations): keep a copy of the vectors from now on
    /// (`memory_vectors.rs`). Makes it now, unless an approximate index
    /// must be built first, which goes on in the background while
    /// sqlite-vec answers.
    pub async fn warm_vectors(&self) -> Result<()> {
        let (_, space) = self.model().await?;
        self.vectors.warm(&self.store, space, &self.events).await
    }

    /// What searches use for vectors now.
    pub fn vector_copy(&self) -> CopyStatus {
        self.vectors.status()
    }

    /// The vector copy a search uses now, caught up with the store;
    /// `None`: sqlite-vec answers. For callers that rank with a vector they
    /// already have (`SearchMode::rank`), as the benchmarks do.
    pub async fn current_vectors(&self) -> Result<Option<Arc<VectorCopy>>> {
        let (_, space) = self.model().await?;
        self.vectors
            .for_query(&self.store, space, &self.events)
            .await
    }

    /// Search results for a person: the chunks `mode` finds (in `scope`,
    /// if given), each with a snippet around the query.
    pub async fn search(
        &self,
        query: &str,
        k: usize,
        mode: SearchMode,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<SearchHit>> {
        Ok(self
            .retrieve(query, k, &Ranker::Search(mode), scope)
            .await?
            .into_iter()
            .map(|(c, score)| SearchHit::new(c, score, query))
            .collect())
    }

    /// The `k` best chunks for `query`, whole, with their scores, best first:
    /// what methods put in prompts.
    pub async fn retrieve(
        &self,
        query: &str,
        k: usize,
        retriever: &Ranker,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(StoredChunk, f64)>> {
        let mut ranked = self.rank(query, k, retriever, scope).await?.ranked;
        ranked.truncate(k);
        self.scored_chunks(&ranked).await
    }

    /// The one way to rank chunks for `query`, whichever the retriever.
    /// With `scope`, every retriever ranks only its documents' chunks.
    pub async fn rank(
        &self,
        query: &str,
        k: usize,
        retriever: &Ranker,
        scope: Option<&DocumentSet>,
    ) -> Result<Ranking> {
        match retriever {
            Ranker::Search(mode) => Ok(Ranking {
                ranked: self.search_ranked(query, k, *mode, scope).await?,
                walk: None,
            }),
            Ranker::GainWalk(walk) => self.walk(query, k, walk, scope).await,
        }
    }

    async fn search_ranked(
        &self,
        query: &str,
        k: usize,
        mode: SearchMode,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f64)>> {
        let (embedder, _) = self.model().await?;
        // The query is embedded only for the modes that use its vector.
        let vector = if mode.uses_vectors() {
            embedder.embed_one_off_executor(query).await?
        } else {
            Vec::new()
        };
        let memory = self.current_vectors().await?;
        mode.rank(&self.store, memory.as_deref(), query, &vector, k, scope)
            .await
    }

    async fn walk(
        &self,
        query: &str,
        k: usize,
        spec: &GainWalk,
        scope: Option<&DocumentSet>,
    ) -> Result<Ranking> {
        let nearest = self.nearest(query, spec.seeds, scope).await?;
        if nearest.is_empty() {
            return Ok(Ranking {
                ranked: Vec::new(),
                walk: None,
            });
        }
        let seeds = seeds(&nearest);
        let graph = match scope {
            None => self.walk_graph(spec.rubric, spec.links).await?,
            Some(documents) => {
                self.scoped_walk_graph(spec.rubric, spec.links, documents)
                    .await?
            }
        };
        let (ranked, stats) = match spec.follow {
            Follow::StrongestEdge => (graph.strongest_edges(&seeds, k), None),
            Follow::Gain(params) | Follow::Similarity(params) => {
                let weights = match spec.follow {
                    Follow::Similarity(_) => Weights::Similarity,
                    _ => Weights::Gain,
                };
                let started = std::time::Instant::now();
                let personalization: Vec<(i64, f64)> =
                    seeds.iter().map(|s| (s.chunk_id, s.weight)).collect();
                let walk = graph.walk(&personalization, weights, params)?;
                let stats = WalkStats {
                    iterations: walk.stats.iterations,
                    converged: walk.stats.converged,
                    last_change: walk.stats.last_change,
                    graph_nodes: graph.nodes(),
                    graph_edges: graph.edges(),
                    walk_ms: started.elapsed().as_secs_f64() * 1000.0,
                };
                (walk.ranked, Some(stats))
            }
        };
        Ok(Ranking {
            ranked,
            walk: Some(WalkRecord {
                seeds,
                graph,
                stats,
            }),
        })
    }

    /// The chunks `ranked` names, in that order, with their scores; chunks
    /// deleted since they were ranked are left out.
    pub async fn scored_chunks(&self, ranked: &[(i64, f64)]) -> Result<Vec<(StoredChunk, f64)>> {
        let ids: Vec<i64> = ranked.iter().map(|(id, _)| *id).collect();
        let scores: HashMap<i64, f64> = ranked.iter().copied().collect();
        Ok(self
            .store
            .chunks_by_id(&ids)
            .await?
            .into_iter()
            .map(|c| {
                let score = scores.get(&c.id).copied().unwrap_or_default();
                (c, score)
            })
            .collect())
    }

    /// The chunks the links written in chunk `chunk_id` lead to (a notes
    /// vault's wikilinks), those outside `scope` left out.
    pub async fn linked(
        &self,
        chunk_id: i64,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<LinkedChunk>> {
        let mut linked = self.store.linked_chunks(chunk_id).await?;
        linked.retain(|l| scope.is_none_or(|s| s.contains(l.to_document)));
        Ok(linked)
    }

    /// The `k` chunks nearest to `query` by embedding (in `scope`, if
    /// given), with their cosine similarity: a gain walk's seeds.
    pub async fn nearest(
        &self,
        query: &str,
        k: usize,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f64)>> {
        self.search_ranked(query, k, SearchMode::Dense, scope).await
    }

    /// Unit vectors for `texts` from the embedding model, so a caller can
    /// compare its own texts the way retrieval compares chunks.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let (embedder, _) = self.model().await?;
        Ok(embedder.embed_off_executor(texts.to_vec()).await?)
    }

    /// Whole chunks by id, in the order given; missing ones are left out.
    pub async fn chunks(&self, ids: &[i64]) -> Result<Vec<StoredChunk>> {
        Ok(self.store.chunks_by_id(ids).await?)
    }

    /// The indexed document at `path` with its tree and chunks; `None` when
    /// it is no longer in the index.
    pub async fn document(&self, path: &str) -> Result<Option<DocumentParts>> {
        let Some(record) = self.store.document(path).await? else {
            return Ok(None);
        };
        Ok(Some(DocumentParts {
            tree: self.store.structure_tree(record.id).await?,
            chunks: self.store.chunks_of(record.id).await?,
        }))
    }

    /// The indexed document with this id, with its path; `None` when it is
    /// no longer in the index.
    pub async fn document_by_id(&self, id: i64) -> Result<Option<(String, DocumentParts)>> {
        let Some(path) = self.store.document_path(id).await? else {
            return Ok(None);
        };
        Ok(self.document(&path).await?.map(|parts| (path, parts)))
    }

    /// Section summaries kept by earlier whole-document answers, by key.
    pub async fn cached_summaries(&self, keys: &[&str]) -> Result<HashMap<String, String>> {
        Ok(self.store.section_summaries(keys).await?)
    }

    pub async fn keep_summary(&self, key: &str, summary: &str) -> Result<()> {
        Ok(self.store.save_section_summary(key, summary).await?)
    }

    /// The walkable graph of `rubric`, read again whenever edges or chunks
    /// changed since the copy in memory was made.
    pub async fn walk_graph(&self, rubric: Rubric, links: bool) -> Result<Arc<WalkGraph>> {
        let version = self.store.gain_graph_version().await?;
        let mut graphs = self.graphs.lock().await;
        if let Some(g) = graphs
            .get(&(rubric, links))
            .filter(|g| g.version == version)
        {
            return Ok(g.clone());
        }
        let fresh = Arc::new(WalkGraph::load(&self.store, rubric, links).await?);
        graphs.insert((rubric, links), fresh.clone());
        Ok(fresh)
    }

    /// The part of the graph of `rubric` (with its link edges, when
    /// `links`) among the chunks of `documents`, kept until the graph
    /// changes or another scope is walked.
    async fn scoped_walk_graph(
        &self,
        rubric: Rubric,
        links: bool,
        documents: &DocumentSet,
    ) -> Result<Arc<WalkGraph>> {
        let whole = self.walk_graph(rubric, links).await?;
        let mut cached = self.scoped_graph.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| {
            c.rubric == rubric
                && c.links == links
                && c.graph.version == whole.version
                && &c.documents == documents
        }) {
            return Ok(c.graph.clone());
        }
        let chunks: HashSet<i64> = documents.chunks().iter().copied().collect();
        let graph = Arc::new(whole.within(&chunks)?);
        *cached = Some(ScopedGraph {
            rubric,
            links,
            documents: documents.clone(),
            graph: graph.clone(),
        });
        Ok(graph)
    }

    /// How much of the index the graph of `rubric` covers.
    pub async fn graph_coverage(&self, rubric: Rubric) -> Result<RubricStatus> {
        let chunks = self.store.embedded_chunks().await?;
        Ok(self.store.rubric_status(rubric, chunks).await?)
    }
}
