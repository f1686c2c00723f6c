#!/usr/bin/env bash
# Runs Folio's benchmarks: `scripts/bench.sh ingest [--quick] [tree|embed|watch|write-amp|embed-server…]`,
# `scripts/bench.sh search [--quick]`, `scripts/bench.sh scale [--quick] [--chunks N]`,
# `scripts/bench.sh ppr [--quick]`,
# `scripts/bench.sh graph [--quick]`,
# `scripts/bench.sh llm [--quick]`,
# `scripts/bench.sh documents [--quick] [pdf-text|ocr|hostile…]` (real PDFs
# fetched from Debian's r-doc-pdf and gnuplot-doc packages into
# target/bench-pdfs, and a build from before the decompression budget) or
# `scripts/bench.sh app` (the desktop app in a real window: cold start, input
# lag while ingesting, idle memory; see ui/e2e/app.perf.ts). Tables go to stdout, JSON to
# bench/results/. The Python baselines (raw ONNX Runtime, numpy, scipy, networkx) run in a venv
# at .venv-bench, created here once; the Rust side is told which python to use
# through FOLIO_BENCH_PYTHON. Benchmarks always run a release build.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv-bench"
# The same ONNX Runtime as the model kit's libonnxruntime, or the embedding
# baseline would compare two runtimes. scipy and networkx are pinned so the
# PPR baselines' timings stay comparable from one run to the next, and faiss
# is the approximate-search baseline of `scale`.
PACKAGES=(numpy onnxruntime==1.31.1 tokenizers scipy==1.17.1 networkx==3.6.1 faiss-cpu==1.15.1)

log() { printf '\033[1m[bench]\033[0m %s\n' "$*" >&2; }

if [ "$#" -eq 0 ]; then
  echo "usage: $0 ingest|search|scale|ppr|graph|llm|documents|app [--quick] [benchmarks…]" >&2
  exit 2
fi

if [ "$1" = app ]; then
  out="$root/target/bench-app"
  # Input lag is measured while the whole 8,094-passage corpus ingests,
  # not the test suite's sample of it.
  hotpotqa="$root/../shared/eval/hotpotqa/corpus.jsonl"
  [ -f "$hotpotqa" ] || { echo "$hotpotqa is missing: the app benchmark ingests the whole corpus" >&2; exit 1; }
  FOLIO_E2E_PROFILE=release FOLIO_E2E_SUITE=e2e/app.perf.ts FOLIO_E2E_OUT="$out" \
    FOLIO_E2E_HOTPOTQA="$hotpotqa" bash "$root/scripts/e2e.sh"
  mkdir -p "$root/bench/results"
  cp "$out/app-bench.json" "$root/bench/results/app.json"
  log "results in bench/results/app.json"
  exit 0
fi

# The document benchmarks' baselines are Debian programs, not Python.
if [ "$1" != documents ] && ! "$venv/bin/python" -c "import numpy, tokenizers, onnxruntime as o, scipy, networkx, faiss
assert (o.__version__, scipy.__version__, networkx.__version__, faiss.__version__) == ('1.31.1', '1.17.1', '3.6.1', '1.15.1')" 2>/dev/null; then
  log "creating $venv with ${PACKAGES[*]}"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet "${PACKAGES[@]}"
fi

cd "$root"

if [ "$1" = documents ]; then
  # Real multi-page PDFs: R's manuals (refman is 2,415 pages) and
  # gnuplot's, as Debian ships them, fetched once from the package registry.
  pdfs="$root/target/bench-pdfs"
  if ! compgen -G "$pdfs/*.pdf" >/dev/null; then
    log "fetching r-doc-pdf and gnuplot-doc from Debian into $pdfs"
    tmp="$(mktemp -d)"
    (cd "$tmp" && apt-get download -q r-doc-pdf gnuplot-doc)
    for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/files"; done
    mkdir -p "$pdfs"
    cp "$tmp"/files/usr/share/R/doc/manual/R-*.pdf "$tmp/files/usr/share/R/doc/manual/refman.pdf" \
      "$tmp/files/usr/share/doc/gnuplot/gnuplot.pdf" "$pdfs/"
    rm -rf "$tmp"
  fi
  export FOLIO_BENCH_PDFS="$pdfs"
  # Baselines that are older builds of folio: each builds into this target
  # folder, so it shares the dependencies already built, and its binary is
  # kept aside for the next run.
  built_at() {
    local rev="$1" what="$2" binary="$root/target/bench-before/folio-$1"
    if [ ! -x "$binary" ]; then
      git -C "$root" cat-file -e "$rev^{commit}" 2>/dev/null || {
        echo "$what's baseline is commit $rev, which this clone lacks: fetch the full history (git fetch --unshallow)" >&2
        exit 1
      }
      log "building folio at $rev (release), the baseline of $what" >&2
      local src="$root/target/bench-before/src"
      rm -rf "$src" && mkdir -p "$src"
      git -C "$root" archive "$rev" | tar -x -C "$src"
      (cd "$src" && cargo build --release --locked --quiet --bin folio --target-dir "$root/target") >&2
      cp "$root/target/release/folio" "$binary"
      rm -rf "$src"
    fi
    echo "$binary"
  }
  # The hostile corpus's "before": the last commit before one decompression
  # budget bounded every container.
  FOLIO_BENCH_BEFORE="$(built_at 0cd72be "the hostile corpus")"
  # reading-marks' baseline: the last commit before the reading log.
  FOLIO_BENCH_UNMARKED="$(built_at 6adaa6ba "reading-marks")"
  export FOLIO_BENCH_BEFORE FOLIO_BENCH_UNMARKED
fi

# embed-server measures a /v1/embeddings server against the embedded model.
# Without FOLIO_EMBEDDING_BASE_URL, the test suite's llama-cpp-python
# (scripts/setup.sh --test-deps) serves the kit's GGUF with embeddings on,
# and stops when this script does.
if [ "$1" = ingest ] && [[ " $* " == *" embed-server "* ]] && [ -z "${FOLIO_EMBEDDING_BASE_URL:-}" ]; then
  server_python="$root/.venv-llm-server/bin/python"
  [ -x "$server_python" ] || { echo "embed-server needs a server: set FOLIO_EMBEDDING_BASE_URL and FOLIO_EMBEDDING_MODEL, or run scripts/setup.sh --test-deps for llama-cpp-python" >&2; exit 1; }
  port=18431
  mkdir -p "$root/target"
  "$server_python" -m llama_cpp.server --model "$root/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" \
    --model_alias smollm2-135m-instruct --host 127.0.0.1 --port "$port" --embedding True --verbose False \
    >"$root/target/embed-server.log" 2>&1 &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 90); do
    curl -fs "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
    sleep 1
  done
  export FOLIO_EMBEDDING_BASE_URL="http://127.0.0.1:$port/v1" FOLIO_EMBEDDING_MODEL=smollm2-135m-instruct
fi

log "building (release)"
cargo build --release --quiet --bin folio
FOLIO_BENCH_PYTHON="$venv/bin/python" "$root/target/release/folio" bench "$@"
