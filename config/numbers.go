package config

import (
	"fmt"
	"math"
)

// Upper bounds on the settings that size what a run allocates before its
// first request (a slot table per server, a row of cells per repeat, a
// reply buffer, a judge's samples) or that no server could honour. TOML
// reads 1e9 and inf as readily as 8, so a typo must stop at validate, not
// exhaust memory in run.
const (
	maxSlots      = 1024      // requests one server runs at once
	maxRepeat     = 10_000    // runs of each cell
	maxSamples    = 100       // votes per judge per cell
	maxRetries    = 100       // attempts after a transient error
	maxTokens     = 1 << 20   // tokens one reply may ask for: past any model's context
	maxReplyBytes = 256 << 20 // one reply body as it arrives
	maxSimReply   = 1 << 20   // tokens a simulated reply runs to
	maxCells      = 2_000_000 // about 1.1 GB of cells
	warnCells     = 250_000
	cellBytes     = 600 // what one cell costs in a run's memory (docs/architecture.md)
)

// finite adds an error at field when x is NaN or infinite and reports
// whether it was a number: every range check below compares with < and >,
// and NaN passes both.
func finite(v *Collector, field string, x float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		v.Add(field, "write a finite number", "%s must be a finite number, got %s", lastKey(field), spellFloat(x))
		return false
	}
	return true
}

// atMost adds an error at field when n is above limit.
func atMost(v *Collector, field string, n, limit int64, why string) {
	if n > limit {
		v.Add(field, why, "%s %d is above the most pitwall takes, %d", lastKey(field), n, limit)
	}
}

// spellFloat writes x as TOML does (nan, inf, -inf), as the user wrote it.
func spellFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return fmt.Sprint(x)
}

// cellsNote says what a run of n cells costs in memory before its first
// request: an error past maxCells, a warning past warnCells, "" below.
func cellsNote(n int64) (msg string, fatal bool) {
	mb := n * cellBytes >> 20
	switch {
	case n > maxCells:
		return fmt.Sprintf("%d cells (models × tests × repeat) would take about %d MB before the first request; pitwall takes at most %d", n, mb, maxCells), true
	case n > warnCells:
		return fmt.Sprintf("%d cells (models × tests × repeat) take about %d MB of memory for the run's state", n, mb), false
	}
	return "", false
}

// checkCells refuses a run whose cells (models × tests × repeat) would take
// more memory than any run should before its first request, and warns of
// one that takes a lot. The error is at repeat, the one setting that
// multiplies the battery.
func checkCells(c *Config, src *Source) Errors {
	n := int64(len(c.Models)) * int64(len(c.Tests)) * int64(max(c.Run.Repeat, 1))
	msg, fatal := cellsNote(n)
	switch {
	case msg == "":
		return nil
	case fatal:
		v := NewCollector(src)
		v.Add("run.repeat", "run fewer models, tests or repeats at a time", "%s", msg)
		return v.Errs
	}
	c.Warnings = append(c.Warnings, msg)
	return nil
}
