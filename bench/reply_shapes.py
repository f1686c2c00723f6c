"""Reply shapes of an evaluation's runs: for the steps whose replies a
method parses, the completion tokens per question and how many replies
were not in the shape the parser reads (issue 27, constrained replies).

Usage: python3 bench/reply_shapes.py EVAL_OUT [EVAL_OUT ...]
where EVAL_OUT is a `folio eval --out` folder (its index/folio.sqlite and
the runs its results.jsonl rows name).

A parse failure is a reply the method had to repair or could not use:
- rdr2: a routing step with ignored text or actions, or a route that fell
  back because no reply was usable;
- activerag: an accommodation without its "Answer:" line. One cut off at
  max_tokens and then concluded (its answer line written by the
  `conclusion` call, held to that line) is counted apart, as concluded;
- pager: an outline reply rejected, or a sub-query reply repaired
  (missing, extra or unusable lines);
- any parsed step cut off at max_tokens.

A reasoner composed over RDR²'s routed passages (`pager:retriever=rdr2`)
gets a second row, `pager over rdr2 routes`: the routing replies of its
retrievals, counted as rdr2's are.
"""

import json
import sqlite3
import sys
from collections import defaultdict

PARSED_STEPS = {
    "rdr2": {"route"},
    "activerag": {"accommodation"},
    "pager": {"outline", "sub-queries", "sub-query"},
}


def failures(method, trace, calls):
    cut = sum(1 for step, _, finish in calls
              if step in PARSED_STEPS.get(method, ()) and finish == "length")
    if trace is None:
        return cut
    if method == "rdr2":
        return cut + routing_failures(trace.get("routes", []))
    if method == "activerag":
        return cut - concluded(method, calls) + int(bool(trace.get("answer_line_missing")))
    if method == "pager":
        notes = trace.get("outline_notes", []) + [n for s in trace.get("steps", []) for n in s.get("notes", [])]
        rejected = sum(1 for n in notes if n.startswith("rejected the outline reply"))
        repaired = sum(1 for n in notes if n.startswith("sub-queries:") or "sub-query reply" in n)
        return cut + rejected + repaired
    return cut


def routing_failures(routes):
    """RDR² routes with ignored text or actions, or that fell back."""
    bad_steps = sum(1 for r in routes for s in r["steps"] if s["ignored"])
    fell_back = sum(1 for r in routes if any("no usable routing reply" in n for n in r["notes"]))
    return bad_steps + fell_back


def composed_routes(trace):
    """The routes of a composed trace's RDR² retrievals, or None when the
    run did not retrieve through RDR²."""
    retrievals = [r for r in (trace or {}).get("retrieval", []) if r.get("retriever") == "rdr2"]
    if not retrievals:
        return None
    return [route for r in retrievals for route in r["routes"]]


def concluded(method, calls):
    """ActiveRAG accommodations cut off and then concluded by one more call."""
    steps = [step for step, _, _ in calls]
    return int(method == "activerag" and "conclusion" in steps)


def kept_run_ids(folder):
    """The runs the evaluation's rows name: a run asked again after a
    failure or an interruption leaves its first run in the index."""
    with open(f"{folder}/results.jsonl") as rows:
        return {json.loads(row)["run_id"] for row in rows if row.strip()}


def report(folder):
    db = sqlite3.connect(f"{folder}/index/folio.sqlite")
    kept = kept_run_ids(folder)
    runs = [r for r in db.execute("select id, method, trace from runs") if r[0] in kept]
    per = defaultdict(lambda: {"questions": 0, "parsed_tokens": 0, "parsed_calls": 0,
                               "all_tokens": 0, "failures": 0, "concluded": 0})
    for run_id, method, trace in runs:
        calls = db.execute(
            "select step, completion_tokens, finish from llm_calls where run_id = ?", (run_id,)
        ).fetchall()
        row = per[method]
        row["questions"] += 1
        row["all_tokens"] += sum(c[1] for c in calls)
        parsed = [c for c in calls if c[0] in PARSED_STEPS.get(method, ())]
        row["parsed_calls"] += len(parsed)
        row["parsed_tokens"] += sum(c[1] for c in parsed)
        trace = json.loads(trace) if trace else None
        row["failures"] += failures(method, trace, calls)
        row["concluded"] += concluded(method, calls)
        routes = composed_routes(trace)
        if routes is not None:
            routing = per[f"{method} over rdr2 routes"]
            route_calls = [c for c in calls if c[0] == "route"]
            route_tokens = sum(c[1] for c in route_calls)
            routing["questions"] += 1
            routing["parsed_calls"] += len(route_calls)
            routing["parsed_tokens"] += route_tokens
            routing["all_tokens"] += route_tokens
            routing["failures"] += (sum(1 for c in route_calls if c[2] == "length")
                                    + routing_failures(routes))
    print(f"{folder}")
    print("| method | questions | parsed replies | their completion tokens / q | all completion tokens / q | parse failures | concluded |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for method, r in sorted(per.items()):
        q = r["questions"]
        print(f"| {method} | {q} | {r['parsed_calls']} | {r['parsed_tokens'] / q:.0f} | "
              f"{r['all_tokens'] / q:.0f} | {r['failures']} | {r['concluded']} |")


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        report(folder)
