"""What iG²RAG's walk adds to its seeds in an evaluation (issue 27): per
supporting title of each question, whether plain hybrid search has it in
its top 5 and top 10, and whether the walk's seeds (the 5 nearest by
embedding alone) and its top 10 have it; then how the gain graph graded
the edges from the seeds to documents the seeds do not already hold,
supporting and other.

Usage: python3 bench/ig2rag_walk.py FOLIO DATASET.jsonl EVAL_OUT
where FOLIO is the binary (for hybrid search over the evaluation's index),
DATASET has `supporting_titles` (HotpotQA) and EVAL_OUT is a `folio eval
--out` folder holding `ig2rag` rows. A document is known by its title, the
first part of a passage's heading path.
"""

import json
import sys
from collections import Counter

from eval_out import index, kept_traces, supporting as supporting_titles, title
from search_recall import search


def share(part, whole):
    return f"{part} of {whole} ({100 * part / whole:.1f}%)" if whole else "0 of 0"


def report(folio, dataset, folder):
    with open(dataset) as lines:
        questions = {q["id"]: q for q in map(json.loads, lines)}
    db = index(folder)
    chunk_title = {i: title(h) for i, h in db.execute("select id, heading_path from chunks")}
    edges = {}
    for source, target, grade in db.execute(
        "select source_chunk, target_chunk, class from gain_edges where rubric = 'coarse'"
    ):
        edges.setdefault(source, []).append((target, grade))

    found = Counter()
    grades = Counter()
    for row, trace in kept_traces(folder, "ig2rag"):
        question = questions[row["question_id"]]
        supporting = supporting_titles(question)
        seeds = {s["chunk_id"] for s in trace["seeds"]}
        seed_titles = {chunk_title[c] for c in seeds}
        walk_titles = {chunk_title[p["chunk_id"]] for p in trace["passages"]}
        hybrid = search(folio, f"{folder}/index", "hybrid", question["question"])
        found["questions"] += 1
        found["supporting titles"] += len(supporting)
        found["hybrid top 5"] += len(supporting & set(hybrid[:5]))
        found["hybrid top 10"] += len(supporting & set(hybrid[:10]))
        found["walk top 10"] += len(supporting & walk_titles)
        found["walk seeds"] += len(supporting & seed_titles)
        found["walk top 10, not among hybrid's top 10"] += len(
            supporting & (walk_titles - set(hybrid[:10]))
        )
        for seed in seeds:
            for target, grade in edges.get(seed, []):
                if chunk_title[target] in seed_titles:
                    continue
                kind = "supporting" if chunk_title[target] in supporting else "other"
                grades[kind, grade] += 1

    print(folder)
    total = found["supporting titles"]
    for name, n in found.items():
        print(f"{name}: {n}" if name in ("questions", "supporting titles") else f"{name}: {share(n, total)}")
    for kind in ("supporting", "other"):
        n = sum(v for (k, _), v in grades.items() if k == kind)
        ends = ", ".join(
            f"{g} {share(v, n)}" for (k, g), v in sorted(grades.items()) if k == kind
        )
        print(f"gain edges out of seeds into {kind} documents the seeds lack: {n} ({ends})")


if __name__ == "__main__":
    report(sys.argv[1], sys.argv[2], sys.argv[3])
