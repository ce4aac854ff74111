#!/usr/bin/env bash
# sim-openai-sdk.sh — cross-check `pitwall sim` with the official OpenAI Node SDK.
#
# Usage: scripts/sim-openai-sdk.sh
#
# Serves one simulated server per backend (openai, ollama, llamacpp, vllm, lmstudio) with
# `pitwall sim`, then runs scripts/sim-openai-sdk.mjs, which drives them with the `openai` npm
# package: models.list and models.retrieve (an id with a slash, which the SDK sends as %2F),
# a forced tool_choice, n, streams with and without include_usage read through the SDK's
# stream helper, a json_schema response format and max_completion_tokens, and checks what
# each backend answers as the real server does (see edges/sim/dialect.go). The Go tests in
# edges/sim check the same shapes without node; this is the cross-check with the SDK itself.
#
# Environment:
#   PITWALL_BIN                  test this pitwall binary instead of building one
#   PITWALL_OPENAI_NODE_VERSION  the openai npm version (default 7.57.0)
#   PITWALL_OPENAI_NODE_DIR      where it is installed (default ~/.cache/pitwall/openai-node-VERSION)
#
# Needs node and npm (the npm registry, once). Exits 0 when every check passes, 1 when one
# fails (each failure is printed), 2 when it cannot run.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION="${PITWALL_OPENAI_NODE_VERSION:-7.57.0}"
DIR="${PITWALL_OPENAI_NODE_DIR:-${HOME:-/root}/.cache/pitwall/openai-node-$VERSION}"

log() { printf 'sim-openai-sdk: %s\n' "$*" >&2; }
die() { printf 'sim-openai-sdk: error: %s\n' "$*" >&2; exit 2; }

command -v node >/dev/null 2>&1 || die "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 || die "npm is not installed (apt-get install npm)"

installed="$(node -p "require('$DIR/node_modules/openai/package.json').version" 2>/dev/null || true)"
if [ "$installed" != "$VERSION" ]; then
  log "installing openai@$VERSION into $DIR"
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "openai@$VERSION" >&2 ||
    die "npm install openai@$VERSION failed"
fi

TMP="$(mktemp -d)"
SIM_PID=""
cleanup() {
  if [ -n "$SIM_PID" ] && kill -0 "$SIM_PID" 2>/dev/null; then
    kill "$SIM_PID" 2>/dev/null || true
    wait "$SIM_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

BIN="${PITWALL_BIN:-}"
if [ -z "$BIN" ]; then
  log "building pitwall"
  (cd "$ROOT" && go build -o "$TMP/pitwall" .) || die "go build failed"
  BIN="$TMP/pitwall"
fi

cat >"$TMP/battery.toml" <<'EOF'
[[tests]]
id = "weather"
name = "Weather"
category = "tools"
user = "What's the weather in Oslo?"
tool_choice = "required"
reference = 'get_weather({"city": "Oslo"})'
  [[tests.tools]]
  type = "function"
    [tests.tools.function]
    name = "get_weather"
    parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
  [[tests.checks]]
  type = "tool-call"
  name = "get_weather"
  args = { city = "Oslo" }
EOF

{
  cat <<'EOF'
name    = "sim-openai-sdk"
battery = "battery.toml"
models  = ["gpt-4o-mini"]

[sim]
time_scale = 0.001

[[sim.models]]
name  = "gpt-4o-mini"
skill = 1.0
EOF
  for backend in openai ollama llamacpp vllm lmstudio; do
    slots=1
    [ "$backend" = llamacpp ] && slots=2
    cat <<EOF

[[servers]]
name   = "$backend"
kind   = "sim"
slots  = $slots
models = ["gpt-4o-mini", "lmstudio-community/qwen3-8b"]
  [servers.sim]
  backend = "$backend"
EOF
  done
} >"$TMP/sim.toml"

"$BIN" sim "$TMP/sim.toml" >"$TMP/sim.out" 2>"$TMP/sim.err" &
SIM_PID=$!
for _ in $(seq 1 300); do
  grep -q '^serving' "$TMP/sim.out" 2>/dev/null && break
  kill -0 "$SIM_PID" 2>/dev/null || { cat "$TMP/sim.err" >&2; die "pitwall sim exited"; }
  sleep 0.1
done
grep -q '^serving' "$TMP/sim.out" || { cat "$TMP/sim.err" >&2; die "pitwall sim did not start in 30 s"; }

# "NAME URL  models: ..." per server; the check gets NAME=URL pairs.
urls="$(awk '$2 ~ /^http/ { printf "%s=%s ", $1, $2 }' "$TMP/sim.out")"
log "serving: $urls"

# Node resolves 'openai' from the script's own directory: run it from where the SDK is.
cp "$ROOT/scripts/sim-openai-sdk.mjs" "$DIR/sim-openai-sdk.mjs"
SIM_URLS="$urls" node "$DIR/sim-openai-sdk.mjs"
