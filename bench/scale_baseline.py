"""Exact answers and the faiss HNSW baseline for `folio bench scale`.

Reads the int8 vectors Folio's store holds (one row per chunk, in chunk
order) and the queries. Folio's exact search (the in-memory scan, and
sqlite-vec) ranks rows by L2 distance from the query to the row as stored,
its int8 values times the quantizing step; that exact top-k, computed here
over the same rows, is the truth both sides are scored against. (Ranking by
the dot product instead is not the same: rounding leaves the stored rows'
squared norms between 0.96 and 1.005, and the two top 10s of the 1M set
share 98.2%.)

faiss (IndexHNSWFlat, L2) is built over the same rows as f32, dequantized
as Folio reads them, with Folio's M, efConstruction and efSearch, on the
same number of threads, and searched one query at a time as Folio's queries
are. Building uses every thread on both sides; a single query uses one on
both.

Folio's own answers (from the serving process) are scored here too, so both
sides' recall comes from one computation:
- by id: the share of the exact top-k ids returned;
- by distance: the share of returned rows whose exact distance is at most
  the exact k-th nearest (plus a relative 1e-4), so near-ties between the
  noisy copies of one passage do not count as misses.

Scopes are the benchmark's folders: chunk i lies in document i // CHUNKS_PER_DOC,
which lies in folder (document % FOLDERS); a scope of p% is folders 0..p.

Usage: scale_baseline.py VECTORS.i8 QUERIES.f32 FOLIO.json DIM STEP K M
       EF_CONSTRUCTION EF_SEARCH THREADS CHUNKS_PER_DOC FOLDERS
STEP: the value of one int8 unit in Folio's store (store::quantize).
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


def squared_distances(queries, block, norms):
    """|q - r|² for every query and row of `block` (whose |r|² are `norms`)."""
    q_norms = np.einsum("ij,ij->i", queries, queries)[:, None]
    return np.maximum(q_norms + norms[None, :] - 2 * (queries @ block.T), 0)


def exact_top_k(vectors, norms, queries, k, allowed=None):
    """Nearest k rows per query by L2, nearest first, with their squared distances."""
    best_ids = np.zeros((len(queries), 0), dtype=np.int64)
    best_dist = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(vectors), BLOCK):
        block = vectors[start : start + BLOCK]
        dist = squared_distances(queries, block, norms[start : start + BLOCK])
        if allowed is not None:
            dist[:, ~allowed[start : start + BLOCK]] = np.inf
        ids = np.broadcast_to(np.arange(start, start + len(block)), dist.shape)
        dist = np.concatenate([best_dist, dist], axis=1)
        ids = np.concatenate([best_ids, ids], axis=1)
        keep = np.argpartition(dist, min(k, dist.shape[1] - 1), axis=1)[:, :k]
        best_dist = np.take_along_axis(dist, keep, axis=1)
        best_ids = np.take_along_axis(ids, keep, axis=1)
    order = np.argsort(best_dist, axis=1)
    return np.take_along_axis(best_ids, order, axis=1), np.take_along_axis(best_dist, order, axis=1)


def recall(found, exact_ids, exact_dist, vectors, norms, queries):
    """(by id, by distance) over all queries."""
    by_id = by_distance = total = 0
    for q, rows in enumerate(found):
        truth = set(int(i) for i in exact_ids[q])
        total += len(truth)
        by_id += sum(1 for r in rows if r in truth)
        if rows:
            kth = float(exact_dist[q][-1])
            rows = np.asarray(rows, dtype=np.int64)
            dist = squared_distances(queries[q : q + 1], vectors[rows], norms[rows])[0]
            by_distance += int(np.sum(dist <= kth * (1 + TIE)))
    return by_id / total, by_distance / total


def main():
    if len(sys.argv) != 13:
        sys.exit(__doc__)
    vectors_path, queries_path, folio_path = sys.argv[1:4]
    dim, step = int(sys.argv[4]), float(sys.argv[5])
    k, m, ef_construction, ef_search, threads, per_doc, folders = map(int, sys.argv[6:13])
    vectors = np.fromfile(vectors_path, dtype=np.int8).reshape(-1, dim).astype(np.float32)
    vectors *= np.float32(step)
    norms = np.einsum("ij,ij->i", vectors, vectors)
    queries = np.fromfile(queries_path, dtype="<f4").reshape(-1, dim)
    with open(folio_path) as f:
        folio = json.load(f)

    start = time.perf_counter()
    exact_ids, exact_dist = exact_top_k(vectors, norms, queries, k)
    exact_seconds = time.perf_counter() - start
    folder_of = (np.arange(len(vectors)) // per_doc) % folders
    folio_recall = {
        "dense": recall(folio["dense"], exact_ids, exact_dist, vectors, norms, queries)
    }
    for percent, found in folio["scoped"].items():
        allowed = folder_of < int(percent) * folders // 100
        ids, dist = exact_top_k(vectors, norms, queries, k, allowed)
        folio_recall[f"scoped {percent}%"] = recall(found, ids, dist, vectors, norms, queries)

    faiss.omp_set_num_threads(threads)
    index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_L2)
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
    faiss_by_id, faiss_by_distance = recall(found, exact_ids, exact_dist, vectors, norms, queries)

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
