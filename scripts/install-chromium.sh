#!/usr/bin/env bash
# install-chromium.sh — make sure a headless Chromium is on PATH, for the HTML export's browser
# test (runner/history: TestHTMLExportInChromium).
#
# Usage: scripts/install-chromium.sh
#
# If `chromium` (or `chromium-browser`) already runs, and on Debian the colour emoji font is
# there too (so that screenshots show ✓ ❌ ⚠️ rather than boxes), nothing is done. Otherwise
# Debian's `chromium` and `fonts-noto-color-emoji` packages are installed with apt-get (needs
# root or sudo). The binary's path is the last line printed on stdout; everything else goes to
# stderr. Exits non-zero with a message when it cannot install. Safe to run again and again.
set -euo pipefail

# One apt-get at a time across these scripts (.ci/run runs Ollama's install beside the others).
APT_LOCK=(env)
if command -v flock >/dev/null 2>&1; then APT_LOCK=(flock /tmp/pitwall-apt.lock); fi

log() { printf 'install-chromium: %s\n' "$*" >&2; }
die() { printf 'install-chromium: error: %s\n' "$*" >&2; exit 1; }

found() {
	local b
	for b in chromium chromium-browser; do
		if command -v "$b" >/dev/null 2>&1 && "$b" --version >/dev/null 2>&1; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

# The emoji font matters only where dpkg can tell: elsewhere a working chromium is enough.
emoji() {
	command -v dpkg-query >/dev/null 2>&1 || return 0
	dpkg-query -W -f='${Status}' fonts-noto-color-emoji 2>/dev/null | grep -q 'install ok installed'
}

if bin="$(found)" && emoji; then
	log "already installed: $("$bin" --version 2>/dev/null)"
	echo "$bin"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "no chromium and no apt-get: install Chromium by hand and put it on PATH"
SUDO=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || die "apt-get needs root: run as root or install sudo"
	SUDO="sudo"
fi

log "installing Debian's chromium and fonts-noto-color-emoji packages (apt-get)…"
export DEBIAN_FRONTEND=noninteractive
"${APT_LOCK[@]}" $SUDO apt-get update -qq >&2
"${APT_LOCK[@]}" $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-noto-color-emoji >&2

bin="$(found)" || die "apt-get installed chromium but it does not run: try \`chromium --version\`"
log "installed: $("$bin" --version 2>/dev/null)"
echo "$bin"
