"""Reading a `folio eval --out` folder for the analysis scripts in bench/:
the supporting titles of a HotpotQA question as the index spells them, and
the traces of the runs an evaluation's rows name."""

import html
import json
import sqlite3


def supporting(question):
    """A question's supporting titles as its passages' headings spell them:
    the dataset keeps some HTML entities (`Jekyll &amp; Hyde`)."""
    return {html.unescape(t) for t in question["supporting_titles"]}


def title(heading_path):
    """A passage's document: the first part of its heading path."""
    return heading_path.split(" › ")[0]


def index(folder):
    """The evaluation's index, read-only."""
    return sqlite3.connect(f"file:{folder}/index/folio.sqlite?mode=ro", uri=True)


def kept_traces(folder, spec):
    """(row, trace) for each of `spec`'s rows whose run kept a trace: a
    question asked again leaves its first run in the index, unnamed."""
    db = index(folder)
    with open(f"{folder}/results.jsonl") as lines:
        rows = [r for r in map(json.loads, lines) if r["spec"] == spec]
    for row in rows:
        found = db.execute("select trace from runs where id = ?", (row["run_id"],)).fetchone()
        if found and found[0]:
            yield row, json.loads(found[0])
