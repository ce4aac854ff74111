#!/usr/bin/env bash
# install-ollama.sh — build a CPU-only Ollama server from its Go module, cached.
#
# Usage: scripts/install-ollama.sh
#
# Builds github.com/ollama/ollama@$PITWALL_OLLAMA_VERSION (default v0.17.4) with cgo into
# $PITWALL_OLLAMA_DIR (default $HOME/.cache/pitwall/ollama); the binary is $DIR/bin/ollama and
# its path is the last line printed on stdout. Everything else goes to stderr.
#
# If the binary is already there and its --version is $PITWALL_OLLAMA_VERSION, nothing is done. Otherwise:
#   * the Go module zip leaves out llama.cpp's vendored headers, so Debian's
#     nlohmann-json3-dev (<nlohmann/json.hpp>) and libstb-dev (<stb/stb_image.h>) are installed
#     with apt-get when missing (needs root or sudo), and
#   * miniaudio.h (taken from the Go module github.com/gen2brain/malgo, which ships it) is put
#     at $DIR/include/miniaudio/miniaudio.h and $DIR/include is passed with -I in
#     CGO_CFLAGS/CGO_CXXFLAGS ("miniaudio/miniaudio.h" is included by llama/llama.cpp/tools/mtmd).
# A cold build takes several minutes on two cores; a rebuild with a warm Go build cache, less
# than one. Exits non-zero with a message on stderr when it cannot build.
set -euo pipefail

# One apt-get at a time across these scripts (.ci/run runs Ollama's install beside the others).
APT_LOCK=(env)
if command -v flock >/dev/null 2>&1; then APT_LOCK=(flock /tmp/pitwall-apt.lock); fi

VERSION="${PITWALL_OLLAMA_VERSION:-v0.17.4}"
MALGO_VERSION="${PITWALL_MALGO_VERSION:-v0.11.24}"
DIR="${PITWALL_OLLAMA_DIR:-${HOME:-/root}/.cache/pitwall/ollama}"
BIN="$DIR/bin/ollama"

log() { printf 'install-ollama: %s\n' "$*" >&2; }
die() { printf 'install-ollama: error: %s\n' "$*" >&2; exit 1; }

# A binary that runs and is the version asked for is all we need. --version talks to OLLAMA_HOST
# only to print the server's version; point it at a closed loopback port so it never waits.
works() {
	local out
	[ -x "$1" ] || return 1
	out="$(OLLAMA_HOST=127.0.0.1:1 timeout 20 "$1" --version 2>&1)" || return 1
	case "$out" in
	*"version is ${VERSION#v}"*) return 0 ;;
	*) return 1 ;;
	esac
}

if works "$BIN"; then
	echo "$BIN"
	exit 0
fi

mkdir -p "$DIR" || die "cannot create $DIR"

# One build at a time per cache dir (two test binaries may call us at once).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$DIR/.lock"
	flock 9
	if works "$BIN"; then # someone else built it while we waited
		echo "$BIN"
		exit 0
	fi
fi

# --- tools -------------------------------------------------------------------------------
if ! command -v go >/dev/null 2>&1; then
	[ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH (Ollama is built from its Go module)"
command -v gcc >/dev/null 2>&1 || die "gcc is not installed (Ollama needs cgo: apt-get install build-essential)"
command -v g++ >/dev/null 2>&1 || die "g++ is not installed (Ollama needs cgo: apt-get install build-essential)"

# --- Debian headers the module zip leaves out ----------------------------------------------
need=()
[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
[ -f /usr/include/stb/stb_image.h ] || need+=(libstb-dev)
if [ "${#need[@]}" -gt 0 ]; then
	command -v apt-get >/dev/null 2>&1 ||
		die "missing headers (${need[*]}) and no apt-get to install them; install them by hand"
	SUDO=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "installing ${need[*]} needs root (or sudo)"
		SUDO=(sudo -n)
	fi
	log "installing ${need[*]} with apt-get"
	"${APT_LOCK[@]}" "${SUDO[@]}" apt-get update -qq >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive "${APT_LOCK[@]}" "${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
		"${need[@]}" >&2 || die "apt-get install ${need[*]} failed"
fi

# --- miniaudio.h from github.com/gen2brain/malgo -------------------------------------------
INC="$DIR/include"
if [ ! -f "$INC/miniaudio/miniaudio.h" ]; then
	log "fetching miniaudio.h from github.com/gen2brain/malgo@$MALGO_VERSION"
	json="$(cd "$DIR" && GOFLAGS= go mod download -json "github.com/gen2brain/malgo@$MALGO_VERSION")" ||
		die "go mod download github.com/gen2brain/malgo@$MALGO_VERSION failed"
	malgo="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n1)"
	[ -n "$malgo" ] || die "go mod download did not say where malgo is"
	hdr="$(find "$malgo" -name miniaudio.h -type f | head -n1)"
	[ -n "$hdr" ] || die "no miniaudio.h in $malgo"
	mkdir -p "$INC/miniaudio"
	cp "$hdr" "$INC/miniaudio/miniaudio.h.tmp"
	mv "$INC/miniaudio/miniaudio.h.tmp" "$INC/miniaudio/miniaudio.h"
fi

# --- build ---------------------------------------------------------------------------------
tmpbin="$DIR/bin.tmp.$$"
rm -rf "$tmpbin"
trap 'rm -rf "$tmpbin"' EXIT
log "building github.com/ollama/ollama@$VERSION (several minutes cold)"
start=$(date +%s)
if ! (cd "$DIR" &&
	CGO_ENABLED=1 \
		CGO_CFLAGS="-O2 -I$INC" \
		CGO_CXXFLAGS="-O2 -I$INC" \
		GOBIN="$tmpbin" \
		GOFLAGS= \
		go install -ldflags "-X github.com/ollama/ollama/version.Version=${VERSION#v}" \
		"github.com/ollama/ollama@$VERSION" >&2); then
	die "go install github.com/ollama/ollama@$VERSION failed (see the compiler output above)"
fi
[ -x "$tmpbin/ollama" ] || die "go install succeeded but left no $tmpbin/ollama"
mkdir -p "$DIR/bin"
mv -f "$tmpbin/ollama" "$BIN"
works "$BIN" || die "built $BIN but '$BIN --version' fails"
log "built $BIN in $(($(date +%s) - start))s"
echo "$BIN"
