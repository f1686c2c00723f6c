#!/usr/bin/env bash
# One full fuzzing pass: builds every target, fuzzes each in turn for the
# given number of seconds (one process, niced, so it shares the machine
# politely), then minimises its corpus back into fuzz/corpus/<target>.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# An input that breaks an invariant is saved in fuzz/artifacts/<target>/;
# once fixed, copy it (minimised with `cargo +nightly fuzz tmin`) into
# fuzz/regressions/<target>/ so that `cargo test --test fuzz_corpus` keeps it
# fixed. The script goes on to the next target and exits 1 at the end if any
# target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-300}
shift || true
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# Documents may be long; model replies are short.
max_len() {
    case "$1" in
        markdown_tree | html_tree | text_tree | chunker) echo 65536 ;;
        *) echo 4096 ;;
    esac
}

cargo +nightly fuzz build
found=()
for target in "${targets[@]}"; do
    limits=(-max_len="$(max_len "$target")" -rss_limit_mb=2048 -timeout=10)
    echo "=== $target: ${seconds}s"
    if ! nice -n 10 cargo +nightly fuzz run "$target" -- \
        "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1; then
        found+=("$target")
    fi
    nice -n 10 cargo +nightly fuzz cmin "$target" -- "${limits[@]}"
done

if [ ${#found[@]} -gt 0 ]; then
    echo "findings in: ${found[*]} (see fuzz/artifacts/)" >&2
    exit 1
fi
