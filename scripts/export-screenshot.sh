#!/usr/bin/env bash
# export-screenshot.sh — remake docs/export-html.png: the demo run's HTML export, opened in a
# headless Chromium on one cell (a link to a cell opens it: #model=…&test=…&repeat=0).
#
# Usage: scripts/export-screenshot.sh [MODEL [TEST [OUT.png]]]
#        (defaults: phi-4-mini json_person docs/export-html.png)
#
# Builds pitwall, runs examples/demo.toml headless into a temporary ledger (the simulated
# fleet, about two seconds at time scale 0.05), exports it with --format html and screenshots
# it at 1280×1000 (tall enough that the grid shows without scrolling, which --screenshot draws
# badly). Chromium comes from scripts/install-chromium.sh; pngquant, when installed, shrinks
# the PNG to about a third.
set -euo pipefail
cd "$(dirname "$0")/.."

model="${1:-phi-4-mini}"
test="${2:-json_person}"
out="${3:-docs/export-html.png}"

chromium="$(scripts/install-chromium.sh | tail -n 1)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/pitwall" .
# The demo has failing cells by design, so its exit code is 1.
PITWALL_SIM_TIME_SCALE=0.05 "$tmp/pitwall" run examples/demo.toml --headless --db "$tmp/ledger.db" >/dev/null 2>&1 || true
"$tmp/pitwall" export last --db "$tmp/ledger.db" --format html -o "$tmp/report.html"

"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-color-profile=srgb \
	--user-data-dir="$tmp/profile" --window-size=1280,1000 --virtual-time-budget=3000 --run-all-compositor-stages-before-draw \
	--screenshot="$tmp/shot.png" "file://$tmp/report.html#model=$model&test=$test&repeat=0" >/dev/null 2>&1
if command -v pngquant >/dev/null 2>&1; then
	pngquant --quality=60-85 --speed 1 --strip --force -o "$tmp/small.png" "$tmp/shot.png" && mv "$tmp/small.png" "$tmp/shot.png"
fi
mkdir -p "$(dirname "$out")"
cp "$tmp/shot.png" "$out"
echo "$out"
