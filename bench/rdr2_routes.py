"""Where RDR²'s supporting passages go in an evaluation (issue 27): per
question, whether a supporting document was among those RDR² retrieved,
whether the reader got a passage of one, and, for the routes RDR² ran,
how each ended over supporting documents and over the others.

Usage: python3 bench/rdr2_routes.py DATASET.jsonl EVAL_OUT
where DATASET has `supporting_titles` (HotpotQA) and EVAL_OUT is a
`folio eval --out` folder holding `rdr2` rows. A document is known by its
title, the first part of a passage's heading path.
"""

import json
import sys
from collections import Counter

from eval_out import kept_traces, supporting as supporting_titles, title


def report(dataset, folder):
    with open(dataset) as lines:
        gold = {q["id"]: supporting_titles(q) for q in map(json.loads, lines)}
    count = Counter()
    routes = Counter()
    for row, trace in kept_traces(folder, "rdr2"):
        supporting = gold[row["question_id"]]
        retrieved = {title(p["heading_path"]) for p in trace["retrieved"]} & supporting
        read = {title(p["heading_path"]) for p in trace["passages"]} & supporting
        count["questions"] += 1
        count["a supporting document retrieved"] += bool(retrieved)
        count["a supporting passage read"] += bool(read)
        outcome = {r["title"]: r["outcome"] for r in trace["routes"]}
        for r in trace["routes"]:
            routes["supporting" if r["title"] in supporting else "other", r["outcome"]] += 1
        if retrieved and not read:
            how = "/".join(sorted({outcome.get(t, "not routed") for t in retrieved}))
            count[f"lost: every supporting route {how}"] += 1
    print(folder)
    for name, n in count.items():
        print(f"{name}: {n}")
    for kind in ("supporting", "other"):
        total = sum(n for (k, _), n in routes.items() if k == kind)
        ends = ", ".join(f"{o} {n}" for (k, o), n in sorted(routes.items()) if k == kind)
        print(f"routes over {kind} documents: {total} ({ends})")


if __name__ == "__main__":
    report(sys.argv[1], sys.argv[2])
