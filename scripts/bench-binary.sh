#!/usr/bin/env bash
# bench-binary.sh — the binary benchmarks at several git revisions, alternating.
#
# Usage: scripts/bench-binary.sh REV...      (e.g. scripts/bench-binary.sh dd574c1 main)
#
# Builds `pitwall` at each REV (a git worktree in a temporary folder) and this tree's cli test
# binary once, then runs BenchmarkBinaryFlat (three 4,000-cell runs and one 100,000-cell run)
# against each revision's binary in turn, for BENCH_ROUNDS rounds (default 3), the order of the
# revisions turning each round so that none always runs on a machine another has just loaded.
# Where PITWALL_PROMPTFOO_DIR holds promptfoo (scripts/install-promptfoo.sh), each round also
# runs one BenchmarkAgainstPromptfoo pair per revision (PITWALL_PROMPTFOO_DISTINCT passes on).
# The simulators are this tree's; only `pitwall run` is the revision's.
#
# Prints each revision's medians over the rounds: peak RSS at 100,000 cells (MB), CPU seconds per
# 1,000 cells at 4,000 and at 100,000 cells, their ratio (the median round's), the 100,000-cell
# run's wall seconds, and promptfoo's CPU per cell over pitwall's. The raw output of every run is
# kept under $BENCH_OUT (default a temporary folder, named at the end). Exits non-zero when a
# run failed or a guard broke (the figures are printed all the same).
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 REV..." >&2; exit 2; }
ROUNDS="${BENCH_ROUNDS:-3}"
ROOT="$(git rev-parse --show-toplevel)"
TMP="$(mktemp -d)"
OUT="${BENCH_OUT:-$TMP/out}"
mkdir -p "$OUT"
log() { printf 'bench-binary: %s\n' "$*" >&2; }

revs=()
for rev in "$@"; do
	sha="$(git -C "$ROOT" rev-parse --short "$rev^{commit}")"
	revs+=("$rev")
	log "building $rev ($sha)"
	git -C "$ROOT" worktree add --detach --quiet "$TMP/src-$sha" "$sha"
	(cd "$TMP/src-$sha" && CGO_ENABLED=0 go build -o "$TMP/pitwall-$sha" .)
	git -C "$ROOT" worktree remove --force "$TMP/src-$sha"
	printf '%s\n' "$sha" >"$OUT/sha-$(echo "$rev" | tr '/' '_')"
done
log "building this tree's cli tests"
(cd "$ROOT" && go test -c -o "$TMP/cli.test" ./cli)

pf=""
if [ -n "${PITWALL_PROMPTFOO_DIR:-}" ] && [ -x "$PITWALL_PROMPTFOO_DIR/bin/promptfoo" ]; then
	pf=1
else
	log "no promptfoo under \$PITWALL_PROMPTFOO_DIR: the comparison with it is left out"
fi

status=0
# run NAME REV BENCH: one benchmark run against REV's binary, its output in $OUT/NAME.
run() {
	local name="$1" rev="$2" bench="$3" sha
	sha="$(cat "$OUT/sha-$(echo "$rev" | tr '/' '_')")"
	log "$name: $bench at $rev ($sha)"
	if ! (cd "$ROOT/cli" && PITWALL_BIN="$TMP/pitwall-$sha" "$TMP/cli.test" -test.run '^$' \
		-test.bench "^$bench\$" -test.benchtime 1x -test.timeout 1h -test.v) >"$OUT/$name" 2>&1; then
		log "$name failed (a guard, or the run): $(grep -E -- '--- FAIL|binary_bench|promptfoo_bench' "$OUT/$name" | tail -3 | tr '\n' ' ')"
		status=1
	fi
}

n=${#revs[@]}
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < n; k++)); do
		rev="${revs[$(((r + k) % n))]}"
		tag="$(echo "$rev" | tr '/' '_')"
		run "flat-$tag-$r" "$rev" BenchmarkBinaryFlat
		[ -z "$pf" ] || run "promptfoo-$tag-$r" "$rev" BenchmarkAgainstPromptfoo
	done
done

# metric FILES... NAME: the first value reported for NAME in each file, one a line.
metric() {
	local name="${*: -1}"
	for f in "${@:1:$#-1}"; do
		[ -f "$f" ] || continue
		awk -v m="$name" '{ for (i = 1; i < NF; i++) if ($(i+1) == m) { print $i; exit } }' "$f"
	done
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2] + v[NR/2+1]) / 2 }'; }
s1k() { awk '{ print $1 / 1000 }'; } # µs per cell → s per 1,000 cells

printf '\n%-12s %-9s %8s %12s %12s %8s %9s %10s  (medians of %d rounds)\n' \
	revision commit peak-MB 'cpu-s/1k@4k' 'cpu-s/1k@100k' 100k/4k wall-s x-promptfoo "$ROUNDS"
for rev in "${revs[@]}"; do
	tag="$(echo "$rev" | tr '/' '_')"
	flat=("$OUT"/flat-"$tag"-*)
	pfs=("$OUT"/promptfoo-"$tag"-*)
	printf '%-12s %-9s %8s %12s %12s %8s %9s %10s\n' "$rev" "$(cat "$OUT/sha-$tag")" \
		"$(metric "${flat[@]}" peak-RSS-MB-100k | median)" \
		"$(metric "${flat[@]}" cpu-µs/cell-4k | s1k | median)" \
		"$(metric "${flat[@]}" cpu-µs/cell-100k | s1k | median)" \
		"$(metric "${flat[@]}" x-cpu-100k/4k | median)" \
		"$(metric "${flat[@]}" wall-s-100k | median)" \
		"$(metric "${pfs[@]}" x-cpu | median)"
done
log "raw output under $OUT"
exit $status
