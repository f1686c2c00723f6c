#!/usr/bin/env bash
# Folio's main job from a fresh machine: set up, build, index the given
# folders on the embedded default models, show what was indexed, answer a
# question from it with vanilla-rag and the kit's default model
# (Qwen2.5-Coder-1.5B-Instruct), and keep
# watching the folders when run from a terminal. With no folder it indexes
# the rust-book chapters the repository carries (samples/rust-book/docs),
# which the sample search and question are about.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
cd "$root"
cargo build --release --locked
folio="$root/target/release/folio"
if [ $# -eq 0 ]; then
  set -- "$root/samples/rust-book/docs"
  sample=1
fi
"$folio" add "$@"
"$folio" status
if [ "${sample:-0}" = 1 ]; then
  echo
  echo "Sample search: folio search \"reference counting\" -k 3"
  "$folio" search "reference counting" -k 3
  question="How do I make a variable mutable?"
else
  question="${FOLIO_QUESTION:-What are these documents about?}"
fi
echo
echo "Sample question: folio ask \"$question\""
"$folio" ask "$question" || echo "(the sample question was not answered; \`folio runs\` has the run and why)"
if [ "${sample:-0}" = 1 ]; then
  # The newest thread is the one just asked in; its id is the first in the list.
  thread="$("$folio" --json threads --limit 1 | sed -n 's/^ *"id": \([0-9]*\),$/\1/p' | head -n 1)"
  follow_up="And what about constants?"
  echo
  echo "Sample follow-up: folio ask --thread $thread \"$follow_up\" (rewritten to stand alone, then answered with the first turn in view)"
  "$folio" ask --thread "$thread" "$follow_up" || echo "(the follow-up did not finish; \`folio threads $thread\` has it)"
fi
if [ -t 0 ]; then
  "$folio" watch
fi
