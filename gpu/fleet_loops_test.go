package gpu

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/internal/oaitest"
)

// TestFleetKeepsALoopsModelForItsNextStep plays an agent loop of model a on
// a JIT server that holds one model at a time, with a job of model b
// queued between its steps: the fleet keeps a for the loop's next step
// rather than load b over it, runs the step on a as it comes, and loads b
// once the hold ends with no step left to come.
func TestFleetKeepsALoopsModelForItsNextStep(t *testing.T) {
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		b := oaitest.Decode(r)
		if b.Model == "a" && b.MaxTokens != 1 {
			call := `{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]}`
			oaitest.Stream(w, true, oaitest.Delta(b.Model, call), oaitest.Finish(b.Model, "tool_calls"), oaitest.Usage(b.Model, 10, 3))
			return
		}
		oaitest.Reply(w, b.Model, "ok")
	}, "a", "b")

	var mu sync.Mutex
	clock := time.Unix(1_000_000, 0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	var loads []string
	warmup := func(_, model string) func(chat.Result, error) {
		mu.Lock()
		loads = append(loads, model)
		mu.Unlock()
		return nil
	}
	// seen receives each view that has b queued, as the policy is shown it.
	seen := make(chan placement.FleetView, 64)
	policy := placement.PolicyFunc(func(v placement.FleetView) []placement.Assignment {
		if slices.ContainsFunc(v.Queue, func(j placement.JobView) bool { return j.Model == "b" }) {
			select {
			case seen <- v:
			default:
			}
		}
		return placement.Default.Place(v)
	})
	const hold = 50 * time.Millisecond
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "lmstudio"}, Slots: 1, Models: []string{"a", "b"}}},
		Options{Policy: policy, ProbeInterval: -1, Now: now, LoopHold: hold, Warmup: warmup,
			Models: map[string]placement.ModelView{"a": {SizeGB: 16}, "b": {SizeGB: 16}}})
	defer f.Close()

	step := func(n, left int) {
		t.Helper()
		tj := trackJob("a", "step")
		tj.job.Steps, tj.job.Loop = left, "loop-1"
		f.Submit(context.Background(), tj.job)
		if o := tj.wait(t); o.err != nil || len(o.res.ToolCalls) != 1 {
			t.Fatalf("step %d: %+v, want a tool call", n, o)
		}
	}
	step(1, 3)

	// b arrives between two steps: the policy is shown the loop's steps
	// still to come on gpu0, and b waits.
	other := trackJob("b", "other")
	f.Submit(context.Background(), other.job)
	betweenSteps := func(left int) {
		t.Helper()
		select {
		case v := <-seen:
			if got := v.Servers[0].Expected; !maps.Equal(got, map[string]int{"a": left}) {
				t.Fatalf("the policy saw Expected = %v on gpu0, want the loop's %d steps to come on a", got, left)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the policy was never shown b")
		}
		// State takes the fleet's lock: the decision on that view is made.
		if st := f.State(); st[0].Busy != 0 || st[0].Loading != "" || !slices.Equal(st[0].Resident, []string{"a"}) || !other.pending() {
			t.Fatalf("gpu0 between the loop's steps: busy %d, loading %q, holding %v; want a kept, idle", st[0].Busy, st[0].Loading, st[0].Resident)
		}
	}
	betweenSteps(2)
	if !other.pending() {
		t.Fatal("b ran while the loop on a was between steps")
	}
	// The next step comes, runs on a at once, and leaves another hold;
	// once that hold ends without a step, b is loaded.
	for len(seen) > 0 {
		<-seen // views from before the step
	}
	step(2, 2)
	// The views shown while step 2 was queued and ran are not those
	// between the steps; the one after it ended is.
	for {
		v := <-seen
		if v.Servers[0].Expected != nil {
			seen <- v
			break
		}
	}
	betweenSteps(1)
	mu.Lock()
	clock = clock.Add(hold)
	mu.Unlock()
	wantOK(t, other.wait(t))
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(loads, []string{"a", "b"}) {
		t.Errorf("loads %v, want a once for both steps, then b", loads)
	}
}
