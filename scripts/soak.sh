#!/usr/bin/env bash
# The soak tests at full size: crates/folio/tests/kill_loop.rs (21 kill -9s over 1,500
# passages, a 40-passage graph and 6 evaluation questions), crates/folio/tests/load.rs
# (ten questions while 8,000 passages ingest and the gain graph builds) and
# crates/folio/tests/hostile.rs (the hostile corpus with 100,000 tiny files) and
# crates/folio/tests/serve_load.rs (20 clients of `folio serve` for two minutes while
# 8,000 passages are indexed). About forty minutes on two cores; docs/hardening.md
# quotes what they measured.
#
# `cargo test` and CI (scripts/test.sh) run the same three tests at a
# smaller size that checks every one of their promises in a few minutes;
# FOLIO_SOAK=full, set here, picks the full size (crates/folio/tests/common/soak.rs).
# They run one after another, as they would in the suite, so that timings
# and peak memory are the test's own. Arguments go to `cargo test`, e.g.
# `scripts/soak.sh -- --nocapture` to see the measurements as they print.
# Needs the model kit (scripts/setup.sh, run first) and, unlike the rest of
# the suite, ../shared next to the checkout: the full size reads the whole
# HotpotQA corpus from ../shared/eval/hotpotqa (crates/folio/tests/common/soak.rs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
cd "$root"
export FOLIO_SOAK=full
# --workspace resolves dependency features as scripts/test.sh's build does,
# so a checkout that has run the suite rebuilds only the three tests.
cargo test --locked --workspace --test kill_loop --test load --test hostile --test serve_load "$@"
