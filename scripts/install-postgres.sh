#!/usr/bin/env bash
# install-postgres.sh — make sure PostgreSQL's server binaries (initdb, postgres) are there, for
# the tests that run the ledger on PostgreSQL (internal/pgtest starts a throwaway cluster of its
# own from them; no service is started and none is needed).
#
# Usage: scripts/install-postgres.sh
#
# If initdb is found (PITWALL_PG_BIN, /usr/lib/postgresql/*/bin, or PATH), nothing is done.
# Otherwise Debian's `postgresql` package is installed with apt-get (needs root or sudo), with
# its cluster and service left alone. The binaries' folder is the last line printed on stdout;
# everything else goes to stderr. Exits non-zero with a message when it cannot install. Safe to
# run again and again.
set -euo pipefail

# One apt-get at a time across these scripts (.ci/run runs Ollama's install beside the others).
APT_LOCK=(env)
if command -v flock >/dev/null 2>&1; then APT_LOCK=(flock /tmp/pitwall-apt.lock); fi

log() { printf 'install-postgres: %s\n' "$*" >&2; }
die() { printf 'install-postgres: error: %s\n' "$*" >&2; exit 1; }

found() {
	local d
	if [ -n "${PITWALL_PG_BIN:-}" ] && [ -x "$PITWALL_PG_BIN/initdb" ]; then
		echo "$PITWALL_PG_BIN"
		return 0
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
		if [ -x "$d/initdb" ]; then
			echo "$d"
			return 0
		fi
	done
	if command -v initdb >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

if dir="$(found)"; then
	log "already installed: $("$dir/postgres" --version 2>/dev/null)"
	echo "$dir"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "no initdb and no apt-get: install PostgreSQL's server by hand and set PITWALL_PG_BIN to its bin folder"
SUDO=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || die "apt-get needs root: run as root or install sudo"
	SUDO="sudo"
fi

log "installing Debian's postgresql package (apt-get)…"
export DEBIAN_FRONTEND=noninteractive
"${APT_LOCK[@]}" $SUDO apt-get update -qq >&2
# policy-rc.d: the package's own service is not started (the tests start their own clusters).
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
	$SUDO chmod +x /usr/sbin/policy-rc.d
	trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
"${APT_LOCK[@]}" $SUDO apt-get install -y -qq --no-install-recommends postgresql >&2

dir="$(found)" || die "apt-get installed postgresql but no initdb was found under /usr/lib/postgresql"
log "installed: $("$dir/postgres" --version 2>/dev/null)"
echo "$dir"
