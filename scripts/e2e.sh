#!/usr/bin/env bash
# End-to-end tests of the desktop app in a real window: builds the UI and the
# app (debug), starts a virtual display (Xvfb), tauri-driver in front of
# WebKitWebDriver, and runs ui/e2e against the app on the embedded models.
# Everything the app writes (settings, index, exports, screenshots) goes to
# $FOLIO_E2E_OUT (default target/e2e), which starts empty each run.
# Needs what `scripts/setup.sh --test-deps` installs; scripts/test.sh runs it.
# FOLIO_E2E_PROFILE=release and FOLIO_E2E_SUITE=<spec> are for
# `scripts/bench.sh app`, which measures the release build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${FOLIO_E2E_OUT:-$root/target/e2e}"
cd "$root"

# The app keeps settings and its index under these; nothing of the
# developer's own Folio is read or touched.
export XDG_CONFIG_HOME="$out/home/config" XDG_DATA_HOME="$out/home/data"
unset FOLIO_CONFIG FOLIO_DATA_DIR
export FOLIO_E2E_OUT="$out"
# The fixtures are the repository's own (samples/README.md). The hotpotqa
# passages may be another corpus of the same form: `scripts/bench.sh app`
# measures ingestion of all 8,094 in ../shared/eval.
export FOLIO_E2E_CORPUS="$root/samples/rust-book/docs"
export FOLIO_E2E_DATASET="$root/samples/rust-book/dev.jsonl"
profile="${FOLIO_E2E_PROFILE:-debug}"
export FOLIO_APP="$root/target/$profile/folio-app"
export FOLIO_E2E_HOTPOTQA="${FOLIO_E2E_HOTPOTQA:-$root/samples/hotpotqa/corpus.jsonl}"
export FOLIO_CLI="$root/target/$profile/folio"
export FOLIO_PROMPTS_DIR="$root/ui/e2e/prompts"
export FOLIO_LLM_TEMPERATURE=0 FOLIO_LLM_MAX_TOKENS=120
# The kit's fastest model answers: the suite checks plumbing, not answers,
# and the default (Qwen2.5-Coder-1.5B) would take minutes a method.
export FOLIO_LLM_MODEL="$root/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# The Hugging Face cache Settings looks in is one the suite fills, so what
# it lists is known (the other apps' folders are the machine's own).
export HF_HUB_CACHE="$out/hf-hub"
# The functional suite closes the window between two commits of an ingest,
# and the sample's 2,006 passages would nearly all go in one commit of the
# default size; a measured suite (FOLIO_E2E_SUITE) keeps the default.
[ -n "${FOLIO_E2E_SUITE:-}" ] || export FOLIO_COMMIT_CHUNKS=200
# No session bus: the keyring is absent, as on a bare machine, so the API
# key falls back to its private file (and the UI warns about it).
unset DBUS_SESSION_BUS_ADDRESS
export NO_AT_BRIDGE=1
export WEBDRIVER_URL="http://127.0.0.1:4444"

if [ "${1:-}" != "--in-display" ]; then
  npm --prefix ui run build --silent
  # One build of both binaries, so they share one build of the engine.
  # The debug build selects the same targets as scripts/test.sh's
  # `cargo test --workspace --all-targets`, so dependencies get the same
  # features (dev-dependencies add some, e.g. tokio's test-util) and are
  # reused from that run, not compiled again with other features.
  if [ "$profile" = release ]; then
    cargo build --locked --workspace --bins --release
  else
    cargo build --locked --workspace --all-targets
  fi
  rm -rf "$out"
  mkdir -p "$out/home/config" "$out/home/data"
  if [ -n "${DISPLAY:-}" ] && [ "${FOLIO_E2E_XVFB:-1}" = 0 ]; then
    bash "$0" --in-display
  else
    # A fresh virtual display for this run (xvfb-run picks a free number).
    xvfb-run -a -s "-screen 0 1280x860x24" bash "$0" --in-display
  fi
  echo "screenshots: $out/screenshots"
  exit 0
fi

"$root/.tools/bin/tauri-driver" --native-driver /usr/bin/WebKitWebDriver --port 4444 \
  >"$out/tauri-driver.log" 2>&1 &
driver_pid=$!
trap 'kill "$driver_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  curl -sf "$WEBDRIVER_URL/status" >/dev/null 2>&1 && break
  sleep 0.2
done
cd "$root/ui"
# FOLIO_E2E_ONLY (a pattern of test names) runs part of the suite while
# working on it; the tests depend on the ones before them (indexing first).
npx vitest run --config vitest.e2e.config.ts ${FOLIO_E2E_ONLY:+-t "$FOLIO_E2E_ONLY"}
