#!/usr/bin/env bash
# Runs Folio's whole test suite with real components (SQLite files,
# sqlite-vec, ONNX Runtime with the MiniLM model from the kit, a real
# llama-cpp-python server for the OpenAI-compatible backend). Installs what it
# needs first (scripts/setup.sh --test-deps), so it works on a fresh machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh" --test-deps
cd "$root"
cargo test --locked --all-targets "$@"
