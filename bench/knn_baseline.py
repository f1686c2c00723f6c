"""numpy brute-force baseline for `folio bench search`.

Exact top-k by dot product over the same unit vectors Folio's store holds:
one matrix-vector product per query, then argpartition for the k best and a
sort of those k. Timed per query, as Folio's queries are.

Usage: knn_baseline.py VECTORS.f32 QUERIES.f32 DIM K
  both files little-endian float32, one row per vector.
Prints one JSON object: {"p50_ms", "p95_ms", "vectors", "queries",
"ids": [[row index, best first] per query], "numpy"}.
"""

import json
import math
import sys
import time

import numpy as np


def percentile(samples, p):
    """Nearest rank, as on the Folio side."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def top_k(matrix, query, k):
    scores = matrix @ query
    best = np.argpartition(-scores, k)[:k]
    return best[np.argsort(-scores[best])]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    dim, k = int(sys.argv[3]), int(sys.argv[4])
    matrix = np.fromfile(sys.argv[1], dtype="<f4").reshape(-1, dim)
    queries = np.fromfile(sys.argv[2], dtype="<f4").reshape(-1, dim)

    # Warm-up, as on the Folio side: first touches fault the pages in.
    for q in queries[:5]:
        top_k(matrix, q, k)

    times, ids = [], []
    for q in queries:
        start = time.perf_counter()
        best = top_k(matrix, q, k)
        times.append((time.perf_counter() - start) * 1000)
        ids.append([int(i) for i in best])

    print(
        json.dumps(
            {
                "p50_ms": percentile(times, 50),
                "p95_ms": percentile(times, 95),
                "vectors": int(matrix.shape[0]),
                "queries": int(queries.shape[0]),
                "ids": ids,
                "numpy": np.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
