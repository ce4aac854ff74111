package gpu

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/gpu/simspec"
	"pitwall/gpu/telemetry"
	"pitwall/internal/oaitest"
)

// A judge model the run announced (Expect) loads on a server that
// inference no longer needs, before any judge job exists, and the judging
// then finds it loaded: one load of each model, the judge's overlapping
// the end of inference.
func TestFleetLoadsAnExpectedJudgeModelBeforeItsJobs(t *testing.T) {
	catalog := map[string]simspec.Model{
		"a": {SizeGB: 12, TokensPerSec: 400, ReplyTokens: 20},
		"j": {SizeGB: 8, TokensPerSec: 400, ReplyTokens: 20},
	}
	s := startSim(t, "gpu0", 2, []string{"a", "j"}, nil, catalog)
	var mu sync.Mutex
	var warmed []string
	models := map[string]placement.ModelView{"a": {SizeGB: 12}, "j": {SizeGB: 8}}
	f := NewFleet([]ServerConfig{simConfig(s, 2, []string{"a", "j"})}, fastProbes(Options{
		Models: models, JudgeModels: map[string]bool{"j": true},
		Warmup: func(server, model string) func(chat.Result, error) {
			return func(_ chat.Result, err error) {
				mu.Lock()
				defer mu.Unlock()
				warmed = append(warmed, fmt.Sprintf("%s/%s err=%v", server, model, err))
			}
		},
	}))
	defer f.Close()
	if errs := f.Discover(context.Background()); errs["gpu0"] != nil {
		t.Fatal(errs)
	}
	f.Expect(map[string]int{"j": 3})

	var infer []*trackedJob
	var jobs []*Job
	for i := range 5 {
		tj := trackJob("a", fmt.Sprint("q", i))
		infer, jobs = append(infer, tj), append(jobs, tj.job)
	}
	f.SubmitAll(context.Background(), jobs)
	for _, tj := range infer {
		wantOK(t, tj.wait(t))
	}
	waitFleet(t, f, "j loaded with no judge job queued", func(st map[string]telemetry.ServerState) bool {
		for _, m := range st["gpu0"].Resident {
			if m == "j" {
				return true
			}
		}
		return false
	})
	if got := s.Stats().Loads["j"]; got != 1 {
		t.Fatalf("j loaded %d times before its jobs, want 1", got)
	}

	var judged []*trackedJob
	jobs = jobs[:0]
	for i := range 3 {
		tj := trackJob("j", fmt.Sprint("judge", i))
		tj.job.Purpose = chat.PurposeJudge
		judged, jobs = append(judged, tj), append(jobs, tj.job)
	}
	f.SubmitAll(context.Background(), jobs)
	for _, tj := range judged {
		wantOK(t, tj.wait(t))
	}
	if loads := s.Stats().Loads; loads["a"] != 1 || loads["j"] != 1 {
		t.Errorf("loads %v, want a and j once each", loads)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warmed) != 2 || warmed[1] != "gpu0/j err=<nil>" {
		t.Errorf("warm-ups reported %v, want a's then j's", warmed)
	}
}

// Each judge job submitted counts one off what Expect announced, so the
// policy is shown only the judging still to come.
func TestFleetCountsSubmittedJudgeJobsOffWhatWasExpected(t *testing.T) {
	srv := oaitest.Server(t, (&oaiJITServer{}).handler)
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1, Models: []string{"j", "a"}}},
		Options{ProbeInterval: -1})
	defer f.Close()
	f.Expect(map[string]int{"j": 2, "none": 0})
	upcoming := func() map[string]int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return maps.Clone(f.upcoming)
	}
	if got := upcoming(); !maps.Equal(got, map[string]int{"j": 2}) {
		t.Fatalf("upcoming %v after Expect, want j: 2", got)
	}
	for i, want := range []map[string]int{{"j": 2}, {"j": 1}, {}} {
		tj := trackJob("j", fmt.Sprint(i))
		if i > 0 {
			tj.job.Purpose = chat.PurposeJudge
		} else {
			tj.job.Request.Model = "a" // inference counts nothing off
		}
		f.Submit(context.Background(), tj.job)
		if got := upcoming(); !maps.Equal(got, want) {
			t.Errorf("after job %d: upcoming %v, want %v", i, got, want)
		}
		wantOK(t, tj.wait(t))
	}
}
