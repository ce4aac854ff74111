package ledger

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// RunUsage sums in SQL what the summary prints, on either backend: counts
// by how each request was answered (abandoned ones apart), the cells they
// were for, tokens and slot time of live requests, and wall time as the
// union of their intervals.
func TestRunUsageSumsTheRunsRequestsInSQL(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	live := func(model, test string, repeat int, endMS, latencyMS int) *Request {
		return &Request{RunID: "r1", Purpose: PurposeInference, Server: "gpu0", Model: model, Test: test, Repeat: repeat,
			Attempt: 1, Status: StatusCompleted, PromptTokens: 10, CompletionTokens: 20,
			Latency:  time.Duration(latencyMS) * time.Millisecond,
			QueuedAt: t0, StartedAt: t0, EndedAt: t0.Add(time.Duration(endMS) * time.Millisecond)}
	}
	rows := []*Request{
		// Written out of start order: summed in the order written, the
		// first would count 20 ms and the next two 10 and 50 more.
		live("m1", "t3", 0, 90, 20),   // 70–90 ms: inside the next, nothing more
		live("m1", "t1", 0, 100, 100), // 0–100 ms
		live("m1", "t2", 0, 150, 100), // 50–150 ms: 50 ms beyond the first
		live("m1", "t1", 0, 1000, 10), // the same cell again, 990–1000 ms
		live("m3", "t1", 0, 120, 40),  // 80–120 ms: 40 ms of m3's, none beyond m1's for inference
		{RunID: "r1", Purpose: PurposeInference, Model: "m2", Test: "t1", Attempt: 1, Status: StatusQueued, QueuedAt: t0}, // never sent
		{RunID: "r1", Purpose: PurposeJudge, Server: ServerCache, Model: "judge-m", CandidateModel: "m1", Judge: "j1", Test: "t1",
			Attempt: 1, Status: StatusCompleted, Verdict: "pass", QueuedAt: t0, StartedAt: t0, EndedAt: t0},
		// A second judge of the same cell: judging holds one cell, not two.
		{RunID: "r1", Purpose: PurposeJudge, Server: ServerCache, Model: "judge-n", CandidateModel: "m1", Judge: "j2", Test: "t1",
			Attempt: 1, Status: StatusCompleted, Verdict: "pass", QueuedAt: t0, StartedAt: t0, EndedAt: t0},
		live("m9", "t1", 0, 100, 100), // another run's
	}
	rows[len(rows)-1].RunID = "r2"
	for _, r := range rows {
		if _, err := l.InsertRequest(r); err != nil {
			t.Fatal(err)
		}
	}
	us, err := l.RunUsage("r1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Usage{}
	for _, u := range us {
		key := u.Purpose + "/" + u.Key
		if u.All {
			key = u.Purpose + "/*"
		}
		u.Purpose, u.Key, u.All = "", "", false
		got[key] = u
	}
	want := map[string]Usage{
		"inference/*": {Requests: 6, Live: 5, Abandoned: 1, Cells: 5, PromptTokens: 50, CompletionTokens: 100,
			Slot: 270 * time.Millisecond, Wall: 160 * time.Millisecond},
		"inference/m1": {Model: "m1", Requests: 4, Live: 4, Cells: 3, PromptTokens: 40, CompletionTokens: 80,
			Slot: 230 * time.Millisecond, Wall: 160 * time.Millisecond},
		"inference/m3": {Model: "m3", Requests: 1, Live: 1, Cells: 1, PromptTokens: 10, CompletionTokens: 20,
			Slot: 40 * time.Millisecond, Wall: 40 * time.Millisecond},
		"inference/m2": {Model: "m2", Requests: 1, Abandoned: 1, Cells: 1},
		"judge/*":      {Requests: 2, Cached: 2, Cells: 1},
		"judge/j1":     {Model: "judge-m", Requests: 1, Cached: 1, Cells: 1},
		"judge/j2":     {Model: "judge-n", Requests: 1, Cached: 1, Cells: 1},
	}
	if len(got) != len(want) {
		t.Errorf("shares %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %+v, want %+v", k, got[k], w)
		}
	}
}

// spanUnion's sum over intervals in start order is the time some interval
// covers, counted tick by tick.
func TestSpanUnionIsTheCoveredTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		type span struct{ s, e int64 }
		spans := make([]span, rng.IntN(8))
		var covered [80]bool
		for i := range spans {
			s := rng.Int64N(60)
			spans[i] = span{s, s + 1 + rng.Int64N(10)}
			for x := spans[i].s; x < spans[i].e; x++ {
				covered[x] = true
			}
		}
		want := int64(0)
		for _, c := range covered {
			if c {
				want++
			}
		}
		slices.SortFunc(spans, func(a, b span) int { return int(a.s - b.s) })
		var u spanUnion
		for _, sp := range spans {
			u.add(sp.s, sp.e)
		}
		if u.total != want {
			t.Fatalf("%v: union %d, want %d", spans, u.total, want)
		}
	}
}
