"""Recall of HotpotQA supporting passages by plain search over an
evaluation's index (issue 27): the mark a walk or router must reach at
the same k. For each question, the share of its supporting titles whose
document is among the top k results of `folio search`, per mode.

Usage: python3 bench/search_recall.py FOLIO DATASET.jsonl EVAL_OUT LIMIT
where FOLIO is the binary, DATASET has `supporting_titles`, and EVAL_OUT
is a `folio eval --out` folder (its index is searched). The embedding
model comes from the environment as for any folio command.
"""

import json
import subprocess
import sys

from eval_out import supporting

MODES = ("hybrid", "dense", "bm25")
KS = (5, 10)


def search(folio, index, mode, question):
    out = subprocess.run(
        [folio, "--data-dir", index, "--json", "search", "-k", str(max(KS)), "--mode", mode, question],
        capture_output=True, text=True, check=True,
    ).stdout
    return [hit["heading_path"].split(" › ")[0] for hit in json.loads(out)]


def report(folio, dataset, folder, limit):
    with open(dataset) as lines:
        questions = [json.loads(line) for line in lines][:limit]
    found = {(mode, k): 0 for mode in MODES for k in KS}
    wanted = sum(len(supporting(q)) for q in questions)
    for q in questions:
        gold = supporting(q)
        for mode in MODES:
            titles = search(folio, f"{folder}/index", mode, q["question"])
            for k in KS:
                found[mode, k] += len(gold & set(titles[:k]))
    print(f"{folder}: {len(questions)} questions, {wanted} supporting titles")
    for (mode, k), n in found.items():
        print(f"{mode} recall@{k}: {n}/{wanted} = {100 * n / wanted:.1f}%")


if __name__ == "__main__":
    report(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
