package ui

import (
	"pitwall/runner/state"
	"strconv"
	"strings"
	"time"
)

// rate formats a pass rate in at most four columns.
func rate(pass, decided int, g *glyphs) string {
	if decided == 0 {
		return g.dash
	}
	return strconv.Itoa((pass*100+decided/2)/decided) + "%"
}

// shortDur formats d in at most five columns: 850ms, 1.23s, 12.3s, 123s, 17m.
func shortDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.Itoa(int(d/time.Millisecond)) + "ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	case d < 100*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < 1000*time.Second:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < 100*time.Minute:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h"
}

// shortRate formats a tokens/s figure in at most four columns.
func shortRate(v float64) string {
	switch {
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v < 10000:
		return strconv.Itoa(int(v + 0.5))
	}
	return strconv.FormatFloat(v/1000, 'f', 0, 64) + "k"
}

// clock formats an elapsed time or an ETA: 45s, 3m07s, 1h02m.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m" + pad2(int(d%time.Minute/time.Second)) + "s"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h" + pad2(int(d%time.Hour/time.Minute)) + "m"
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// waiting says which servers are down with work waiting on them, since
// when and why, and how much waits, and which are rate-limited (a 429's
// Retry-After), until when and for how long they asked: "" when none is.
// The header and the headless output both show it.
func waiting(run *state.BatteryRun, now time.Time) string {
	if run == nil || run.Final {
		return ""
	}
	var parts []string
	for _, s := range run.Stranded() {
		p := s.Name + " down"
		if !s.DownSince.IsZero() {
			p += " " + clock(max(now.Sub(s.DownSince), 0))
		}
		if s.DownReason != "" {
			p += " (" + s.DownReason + ")"
		}
		parts = append(parts, p+": "+strconv.Itoa(s.Stranded)+" waiting")
	}
	for _, s := range run.Fleet {
		if !s.Up || !s.HeldUntil.After(now) {
			continue
		}
		p := s.Name + " rate-limited until " + s.HeldUntil.Format("15:04:05")
		if s.RetryAfter > 0 {
			p += " (asked to retry after " + clock(s.RetryAfter) + ")"
		}
		if s.Queue > 0 {
			p += ": " + strconv.Itoa(s.Queue) + " waiting"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "waiting on " + strings.Join(parts, "; ")
}
