#!/usr/bin/env bash
# Folio's desktop app from a fresh machine: set up, build the UI and the app
# (release), and start it. The app runs the watcher and indexing in the
# background and answers with the embedded default models until Settings
# points it at a stronger one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
cd "$root"
npm --prefix ui run build --silent
cargo build --release --locked -p folio-desktop
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "No display: start Folio from a desktop session (or under xvfb-run for a smoke test)." >&2
  exit 1
fi
exec "$root/target/release/folio-app"
