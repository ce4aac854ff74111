package compare

import (
	"encoding/json"
	"strconv"
)

// The one rule of a pass rate, for the grid, the summary, `runs`,
// `compare`, the exports and the gates alike.
//
// A rate is of decided cells only. Pending cells are never failures: a
// ❌ or ⚠️ is decided as soon as inference ends while a ✓ waits for its
// verdict, so counting what is decided so far reads low. While cells are
// pending the rate is provisional and comes with its bounds (what it would
// be if every pending cell failed, or passed). Where cells wait for the
// judge in view and it has decided none of them, the failures alone are
// no rate: it is unknown (— in text, null in JSON), as with nothing decided.

// Known reports whether the counts give a pass rate.
func (c Counts) Known() bool {
	return c.Decided > 0 && (c.Unjudged == 0 || c.Verdicts > 0)
}

// Rated is the number of cells the pass rate is over: Decided when it is
// known, else 0 (the statistics' "nothing to say").
func (c Counts) Rated() int {
	if !c.Known() {
		return 0
	}
	return c.Decided
}

// Provisional reports whether the rate may still move: cells are pending.
func (c Counts) Provisional() bool { return c.Pending > 0 }

// PassRate is Pass/Decided, nil when the rate is unknown.
func (c Counts) PassRate() *float64 {
	if !c.Known() {
		return nil
	}
	r := float64(c.Pass) / float64(c.Decided)
	return &r
}

// Bounds are the lowest and highest the rate can still come to, once
// every pending cell is decided; (0, 1) when it is unknown.
func (c Counts) Bounds() (lo, hi float64) {
	if !c.Known() {
		return 0, 1
	}
	n := float64(c.Decided + c.Pending)
	return float64(c.Pass) / n, float64(c.Pass+c.Pending) / n
}

// RateText is the rate in whole percent: "83%", "40–90%" while cells are
// pending (its bounds), "—" when unknown.
func (c Counts) RateText() string {
	if !c.Known() {
		return "—"
	}
	if c.Pending == 0 {
		return Percent(float64(c.Pass)/float64(c.Decided), c.Decided)
	}
	lo, hi := c.Bounds()
	a, b := int(100*lo+0.5), int(100*hi+0.5)
	if a == b {
		return strconv.Itoa(a) + "%"
	}
	return strconv.Itoa(a) + "–" + strconv.Itoa(b) + "%"
}

// RateNote is what goes beside a rate in words: "3/5", "3/5, 4 pending",
// "4 pending" or "nothing decided".
func (c Counts) RateNote() string {
	switch {
	case !c.Known() && c.Pending > 0:
		return strconv.Itoa(c.Pending) + " pending"
	case !c.Known():
		return "nothing decided"
	case c.Pending > 0:
		return strconv.Itoa(c.Pass) + "/" + strconv.Itoa(c.Decided) + ", " + strconv.Itoa(c.Pending) + " pending"
	}
	return strconv.Itoa(c.Pass) + "/" + strconv.Itoa(c.Decided)
}

// MarshalJSON writes pass_rate as null when the rate is unknown.
func (s ModelStats) MarshalJSON() ([]byte, error) {
	type plain ModelStats
	out := struct {
		plain
		Rate        *Interval `json:"pass_rate"`
		Provisional bool      `json:"provisional"`
	}{plain: plain(s), Provisional: s.Provisional()}
	if s.Known() {
		out.Rate = &s.Rate
	}
	return json.Marshal(out)
}

// MarshalJSON writes pass_rate as null when the rate is unknown.
func (s CategoryStats) MarshalJSON() ([]byte, error) {
	type plain CategoryStats
	out := struct {
		plain
		Rate *Interval `json:"pass_rate"`
	}{plain: plain(s)}
	if s.Known() {
		out.Rate = &s.Rate
	}
	return json.Marshal(out)
}

// Passed is pass/decided, "+N" after it for cells pending: "2/5 +1", for
// a narrow column.
func (c Counts) Passed() string {
	s := strconv.Itoa(c.Pass) + "/" + strconv.Itoa(c.Decided)
	if c.Pending > 0 {
		s += " +" + strconv.Itoa(c.Pending)
	}
	return s
}
