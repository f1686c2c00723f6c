#!/usr/bin/env bash
# Runs Folio's whole test suite with real components (SQLite files,
# sqlite-vec, ONNX Runtime with the MiniLM model from the kit, the embedded
# SmolLM2, a real llama-cpp-python server for the OpenAI-compatible backend,
# and the desktop app in a real window). Installs what it needs first
# (scripts/setup.sh --test-deps), so it works on a fresh machine.
# Arguments go to `cargo test` of the workspace.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh" --test-deps
cd "$root"

# Each step says when it began (seconds since this script started, setup
# included), so a slow run shows where its time went.
step() { printf '\n\033[1m[test %ss]\033[0m %s\n' "$SECONDS" "$*" >&2; }

# A clean CI clone builds everything once: incremental compilation would
# only write caches nobody reads.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0
fi

step "engine, CLI and desktop shell"
# The shell embeds the built frontend (ui/dist), so build it first. One cargo
# build for the whole workspace builds the engine once, not once per package.
npm --prefix ui run build --silent
cargo test --locked --workspace --all-targets --no-run "$@"
# Unit tests first: their export tests rewrite the UI's generated types.
cargo test --locked --workspace --lib --bins "$@"

# Committed types that differ from the Rust ones mean the UI was checked
# against stale ones.
if [ -n "$(git status --porcelain -- ui/src/lib/bindings)" ]; then
  git status --short -- ui/src/lib/bindings >&2
  echo "ui/src/lib/bindings is out of date with the Rust types: commit the regenerated files" >&2
  exit 1
fi

# The UI's type check and unit tests need only Node, and the integration
# tests leave part of the CPU idle (children killed and restarted, disks
# filled, files watched), so they run side by side; the UI's output is
# shown once both are done.
ui_log=$(mktemp)
trap 'rm -f "$ui_log"' EXIT
(npm --prefix ui run check --silent && npm --prefix ui test --silent) >"$ui_log" 2>&1 &
ui_checks=$!
cargo test --locked --workspace --test '*' "$@"
step "UI: types, unit tests"
ui_status=0
wait "$ui_checks" || ui_status=$?
cat "$ui_log"
if [ "$ui_status" -ne 0 ]; then
  echo "the UI's type check or unit tests failed (above)" >&2
  exit "$ui_status"
fi

step "desktop app end to end (Xvfb, tauri-driver, WebKitWebDriver)"
bash "$root/scripts/e2e.sh"
step "all passed"
