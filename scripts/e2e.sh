#!/usr/bin/env bash
# End-to-end tests of the desktop app in a real window: builds the UI and the
# app (debug), starts a virtual display (Xvfb), tauri-driver in front of
# WebKitWebDriver, and runs ui/e2e against the app on the embedded models.
# Everything the app writes (settings, index, exports, screenshots) goes to
# $FOLIO_E2E_OUT (default target/e2e), which starts empty each run.
# Needs what `scripts/setup.sh --test-deps` installs; scripts/test.sh runs it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${FOLIO_E2E_OUT:-$root/target/e2e}"
cd "$root"

npm --prefix ui run build --silent
cargo build --locked -p folio-desktop

rm -rf "$out"
mkdir -p "$out/home/config" "$out/home/data"
# The app keeps settings and its index under these; nothing of the
# developer's own Folio is read or touched.
export XDG_CONFIG_HOME="$out/home/config" XDG_DATA_HOME="$out/home/data"
unset FOLIO_CONFIG FOLIO_DATA_DIR
export FOLIO_E2E_OUT="$out"
export FOLIO_E2E_CORPUS="$root/../shared/eval/rust-book/docs"
export FOLIO_APP="$root/target/debug/folio-app"
export FOLIO_PROMPTS_DIR="$root/ui/e2e/prompts"
export FOLIO_LLM_TEMPERATURE=0 FOLIO_LLM_MAX_TOKENS=120
# No session bus: the keyring is absent, as on a bare machine, so the API
# key falls back to its private file (and the UI warns about it).
unset DBUS_SESSION_BUS_ADDRESS
export NO_AT_BRIDGE=1
export WEBDRIVER_URL="http://127.0.0.1:4444"

driver_pid=""
cleanup() {
  if [ -n "$driver_pid" ]; then kill "$driver_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

run_tests() {
  "$root/.tools/bin/tauri-driver" --native-driver /usr/bin/WebKitWebDriver --port 4444 \
    >"$out/tauri-driver.log" 2>&1 &
  driver_pid=$!
  for _ in $(seq 1 50); do
    curl -sf "$WEBDRIVER_URL/status" >/dev/null 2>&1 && break
    sleep 0.2
  done
  (cd "$root/ui" && npx vitest run --config vitest.e2e.config.ts)
}

if [ -n "${DISPLAY:-}" ] && [ "${FOLIO_E2E_XVFB:-1}" = 0 ]; then
  run_tests
else
  export -f run_tests cleanup
  export root out
  xvfb-run -a -s "-screen 0 1280x860x24" bash -c 'trap cleanup EXIT; run_tests'
fi
echo "screenshots: $out/screenshots"
