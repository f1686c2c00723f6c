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

step() { printf '\n\033[1m[test]\033[0m %s\n' "$*" >&2; }

# A clean CI clone builds everything once: incremental compilation would
# only write caches nobody reads.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0
fi

step "engine, CLI and desktop shell"
# The shell embeds the built frontend (ui/dist), so build it first. One cargo
# run for the whole workspace builds the engine once, not once per package.
npm --prefix ui run build --silent
cargo test --locked --workspace --all-targets "$@"

# The export tests above rewrote the UI's generated types from the Rust
# ones; committed types that differ mean the UI was checked against stale ones.
if [ -n "$(git status --porcelain -- ui/src/lib/bindings)" ]; then
  git status --short -- ui/src/lib/bindings >&2
  echo "ui/src/lib/bindings is out of date with the Rust types: commit the regenerated files" >&2
  exit 1
fi

step "UI: types, unit tests"
npm --prefix ui run check --silent
npm --prefix ui test --silent

step "desktop app end to end (Xvfb, tauri-driver, WebKitWebDriver)"
bash "$root/scripts/e2e.sh"
