"""Raw HTTP baseline for `folio bench ingest embed-server`.

Posts the texts of an input JSON file to an OpenAI-compatible
`/v1/embeddings` endpoint with nothing in between: the same texts, the same
texts per request and the same number of requests in flight as Folio used
(threads of the standard library's urllib), reading each reply's JSON and
nothing more. Folio's side does the same and also checks, pools and
normalises every vector; the ratio of the two is Folio's client overhead on
that server.

Usage: embed_server_baseline.py INPUT.json
  INPUT.json: {"texts": [...], "endpoint": str, "model": str,
               "batch": int, "parallel": int}
Prints one JSON object: {"texts_per_s", "seconds", "texts", "requests"}.
"""

import json
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def post(endpoint, model, texts):
    body = json.dumps({"model": model, "input": texts}).encode()
    request = urllib.request.Request(endpoint, data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as reply:
        data = json.load(reply)["data"]
    if len(data) != len(texts):
        raise SystemExit(f"{len(data)} vectors for {len(texts)} texts")
    return len(data)


def main():
    job = json.load(open(sys.argv[1]))
    texts, batch = job["texts"], job["batch"]
    parts = [texts[i : i + batch] for i in range(0, len(texts), batch)]
    post(job["endpoint"], job["model"], parts[0])  # untimed, as on Folio's side
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=job["parallel"]) as pool:
        done = sum(pool.map(lambda part: post(job["endpoint"], job["model"], part), parts))
    seconds = time.perf_counter() - start
    print(json.dumps({"texts_per_s": done / seconds, "seconds": seconds, "texts": done, "requests": len(parts)}))


main()
