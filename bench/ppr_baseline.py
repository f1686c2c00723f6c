"""scipy and networkx baselines for `folio bench ppr`.

Personalized PageRank on the same graph and seeds as Folio, two ways:

- scipy: a sparse power iteration written like Folio's: the column-normalised
  transition matrix T built once as a CSR array, then per query
  r <- (1-alpha) * (T @ r + dangling mass * p) + alpha * p from r = p, until
  the L1 change is below epsilon.
- networkx.pagerank with the matching settings. Its `alpha` is the damping
  factor, so it gets 1 - alpha; it stops when the L1 change is below
  len(G) * tol, so it gets tol = epsilon / len(G); it starts from uniform
  unless given `nstart`, so it gets the seeds there too. Dangling nodes
  restart from the personalization, as in Folio (`dangling=None`). It
  rebuilds its sparse matrix from the graph on every call: that is part of
  what a networkx user pays per query, so it stays in the timing.

Each query is timed on its own after a warm-up, as on the Folio side.

Usage: ppr_baseline.py GRAPH QUERIES NODES ALPHA EPSILON NETWORKX_QUERIES SCORES_DIR
  GRAPH: one record per edge, little-endian (u32 source, u32 target, f64 weight).
  QUERIES: one record per seed, little-endian (u32 query, u32 node, f64 score),
    queries numbered from 0.
  NETWORKX_QUERIES: how many of the queries networkx runs (it is slow).
Writes each method's scores to SCORES_DIR/scipy.f64 and networkx.f64
(little-endian float64, one row of NODES per query, in query order).
Prints one JSON object: {"nodes", "edges", "queries", "networkx_queries",
"scipy_p50_ms", "scipy_p95_ms", "scipy_iterations": [per query],
"scipy_build_ms", "networkx_p50_ms", "networkx_p95_ms", "networkx_build_ms",
"numpy", "scipy", "networkx"}.
"""

import json
import math
import os
import sys
import time

import networkx as nx
import numpy as np
import scipy
import scipy.sparse

EDGE = np.dtype([("source", "<u4"), ("target", "<u4"), ("weight", "<f8")])
SEED = np.dtype([("query", "<u4"), ("node", "<u4"), ("score", "<f8")])
WARMUP = 5
MAX_ITER = 1000


def percentile(samples, p):
    """Nearest rank, as on the Folio side."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def transition_matrix(edges, nodes):
    """T[i, j] = w(j -> i) / out-weight of j; duplicates are summed."""
    out = np.bincount(edges["source"], weights=edges["weight"], minlength=nodes)
    share = edges["weight"] / out[edges["source"]]
    t = scipy.sparse.csr_array(
        (share, (edges["target"], edges["source"])), shape=(nodes, nodes)
    )
    return t, np.flatnonzero(out == 0)


def ppr_scipy(t, dangling, seeds, alpha, epsilon):
    p = np.zeros(t.shape[0])
    np.add.at(p, seeds["node"], seeds["score"])
    p /= p.sum()
    r = p
    for iteration in range(1, MAX_ITER + 1):
        restart = (1 - alpha) * r[dangling].sum() + alpha
        following = (1 - alpha) * (t @ r) + restart * p
        change = np.abs(following - r).sum()
        r = following
        if change < epsilon:
            break
    return r, iteration


def ppr_networkx(graph, seeds, alpha, epsilon):
    seed_scores = {}
    for node, score in zip(seeds["node"].tolist(), seeds["score"].tolist()):
        seed_scores[node] = seed_scores.get(node, 0.0) + score
    return nx.pagerank(
        graph,
        alpha=1 - alpha,
        personalization=seed_scores,
        nstart=seed_scores,
        tol=epsilon / len(graph),
        max_iter=MAX_ITER,
        weight="weight",
        dangling=None,
    )


def timed(run, queries, warmup):
    for q in queries[:warmup]:
        run(q)
    times, results = [], []
    for q in queries:
        start = time.perf_counter()
        result = run(q)
        times.append((time.perf_counter() - start) * 1000)
        results.append(result)
    return times, results


def main():
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    nodes, alpha, epsilon = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    networkx_queries, scores_dir = int(sys.argv[6]), sys.argv[7]
    edges = np.fromfile(sys.argv[1], dtype=EDGE)
    seeds = np.fromfile(sys.argv[2], dtype=SEED)
    queries = [seeds[seeds["query"] == q] for q in range(int(seeds["query"].max()) + 1)]

    start = time.perf_counter()
    t, dangling = transition_matrix(edges, nodes)
    scipy_build_ms = (time.perf_counter() - start) * 1000
    scipy_ms, scipy_runs = timed(
        lambda q: ppr_scipy(t, dangling, q, alpha, epsilon), queries, WARMUP
    )
    np.stack([r for r, _ in scipy_runs]).astype("<f8").tofile(
        os.path.join(scores_dir, "scipy.f64")
    )

    start = time.perf_counter()
    graph = nx.DiGraph()
    graph.add_nodes_from(range(nodes))
    graph.add_weighted_edges_from(
        zip(
            edges["source"].tolist(),
            edges["target"].tolist(),
            edges["weight"].tolist(),
        )
    )
    networkx_build_ms = (time.perf_counter() - start) * 1000
    networkx_ms, networkx_runs = timed(
        lambda q: ppr_networkx(graph, q, alpha, epsilon),
        queries[:networkx_queries],
        1,
    )
    np.array(
        [[ranks[n] for n in range(nodes)] for ranks in networkx_runs], dtype="<f8"
    ).tofile(os.path.join(scores_dir, "networkx.f64"))

    print(
        json.dumps(
            {
                "nodes": nodes,
                "edges": int(len(edges)),
                "queries": len(queries),
                "networkx_queries": len(networkx_runs),
                "scipy_p50_ms": percentile(scipy_ms, 50),
                "scipy_p95_ms": percentile(scipy_ms, 95),
                "scipy_iterations": [i for _, i in scipy_runs],
                "scipy_build_ms": scipy_build_ms,
                "networkx_p50_ms": percentile(networkx_ms, 50),
                "networkx_p95_ms": percentile(networkx_ms, 95),
                "networkx_build_ms": networkx_build_ms,
                "numpy": np.__version__,
                "scipy": scipy.__version__,
                "networkx": nx.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
