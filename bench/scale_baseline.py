"""Exact answers and the faiss HNSW baseline for `folio bench scale`.

Reads the int8 vectors Folio's store holds (one row per chunk, in chunk
order) and the queries. Every int8 row carries the same scale, so ranking by
the dot product of the raw int8 values with the query is ranking by Folio's
similarity; that exact top-k is the truth both sides are scored against.

faiss (IndexHNSWFlat, inner product) is built over the same rows as f32,
with Folio's M, efConstruction and efSearch, on the same number of threads,
and searched one query at a time as Folio's queries are. Building uses
every thread on both sides; a single query uses one on both.

Folio's own answers (from the serving process) are scored here too, so both
sides' recall comes from one computation:
- by id: the share of the exact top-k ids returned;
- by distance: the share of returned rows whose exact similarity is at
  least the exact k-th best (less a relative 1e-4), so near-ties between
  the noisy copies of one passage do not count as misses.

Scopes are the benchmark's folders: chunk i lies in document i // CHUNKS_PER_DOC,
which lies in folder (document % FOLDERS); a scope of p% is folders 0..p.

Usage: scale_baseline.py VECTORS.i8 QUERIES.f32 FOLIO.json DIM K M EF_CONSTRUCTION
       EF_SEARCH THREADS CHUNKS_PER_DOC FOLDERS
FOLIO.json: {"dense": [[row, ...] per query], "scoped": {"<percent>": [[row, ...]]}}
Prints one JSON object (see the end of main).
"""

import json
import math
import sys
import time

import faiss
import numpy as np

# Rows scored per block of the exact scan: bounds its memory.
BLOCK = 100_000
# Relative slack below the k-th exact similarity that still counts.
TIE = 1e-4


def percentile(samples, p):
    """Nearest rank, as on the Folio side."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def exact_top_k(vectors, queries, k, allowed=None):
    """Best k rows per query by dot product, best first, with their scores."""
    best_ids = np.zeros((len(queries), 0), dtype=np.int64)
    best_scores = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(vectors), BLOCK):
        block = vectors[start : start + BLOCK]
        scores = queries @ block.T
        if allowed is not None:
            scores[:, ~allowed[start : start + BLOCK]] = -np.inf
        ids = np.broadcast_to(np.arange(start, start + len(block)), scores.shape)
        scores = np.concatenate([best_scores, scores], axis=1)
        ids = np.concatenate([best_ids, ids], axis=1)
        keep = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
        best_scores = np.take_along_axis(scores, keep, axis=1)
        best_ids = np.take_along_axis(ids, keep, axis=1)
    order = np.argsort(-best_scores, axis=1)
    return np.take_along_axis(best_ids, order, axis=1), np.take_along_axis(best_scores, order, axis=1)


def recall(found, exact_ids, exact_scores, vectors, queries):
    """(by id, by distance) over all queries."""
    by_id = by_distance = total = 0
    for q, rows in enumerate(found):
        truth = set(int(i) for i in exact_ids[q])
        total += len(truth)
        by_id += sum(1 for r in rows if r in truth)
        if rows:
            kth = float(exact_scores[q][-1])
            scores = vectors[np.asarray(rows, dtype=np.int64)] @ queries[q]
            by_distance += int(np.sum(scores >= kth - abs(kth) * TIE))
    return by_id / total, by_distance / total


def main():
    if len(sys.argv) != 12:
        sys.exit(__doc__)
    vectors_path, queries_path, folio_path = sys.argv[1:4]
    dim, k, m, ef_construction, ef_search, threads, per_doc, folders = map(int, sys.argv[4:12])
    vectors = np.fromfile(vectors_path, dtype=np.int8).reshape(-1, dim).astype(np.float32)
    queries = np.fromfile(queries_path, dtype="<f4").reshape(-1, dim)
    with open(folio_path) as f:
        folio = json.load(f)

    start = time.perf_counter()
    exact_ids, exact_scores = exact_top_k(vectors, queries, k)
    exact_seconds = time.perf_counter() - start
    folder_of = (np.arange(len(vectors)) // per_doc) % folders
    folio_recall = {"dense": recall(folio["dense"], exact_ids, exact_scores, vectors, queries)}
    for percent, found in folio["scoped"].items():
        ids, scores = exact_top_k(vectors, queries, k, folder_of < int(percent) * folders // 100)
        folio_recall[f"scoped {percent}%"] = recall(found, ids, scores, vectors, queries)

    faiss.omp_set_num_threads(threads)
    index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    start = time.perf_counter()
    index.add(vectors)
    build_seconds = time.perf_counter() - start
    index.hnsw.efSearch = ef_search
    faiss.omp_set_num_threads(1)
    for q in queries[:5]:
        index.search(q[None, :], k)
    times, found = [], []
    for q in queries:
        started = time.perf_counter()
        _, ids = index.search(q[None, :], k)
        times.append((time.perf_counter() - started) * 1000)
        found.append([int(i) for i in ids[0] if i >= 0])
    faiss_by_id, faiss_by_distance = recall(found, exact_ids, exact_scores, vectors, queries)

    print(
        json.dumps(
            {
                "vectors": int(vectors.shape[0]),
                "queries": int(queries.shape[0]),
                "exact_seconds": exact_seconds,
                "faiss": {
                    "version": faiss.__version__,
                    "build_seconds": build_seconds,
                    "p50_ms": percentile(times, 50),
                    "p95_ms": percentile(times, 95),
                    "recall_by_id": faiss_by_id,
                    "recall_by_distance": faiss_by_distance,
                    "ms": times,
                },
                "folio_recall": {
                    name: {"by_id": r[0], "by_distance": r[1]} for name, r in folio_recall.items()
                },
            }
        )
    )


if __name__ == "__main__":
    main()
