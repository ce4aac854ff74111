package gpu

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/telemetry"
)

func TestAJobNoServerCanRunIsGivenUpAfterMaxWait(t *testing.T) {
	up := startSim(t, "up", 1, []string{"a"}, nil, nil)
	gone := startSim(t, "gone", 1, []string{"b"}, nil, nil)
	f := NewFleet([]ServerConfig{simConfig(up, 1, []string{"a"}), simConfig(gone, 1, []string{"b"})},
		fastProbes(Options{MaxWait: 300 * time.Millisecond}))
	defer f.Close()
	_ = gone.Close() // for good
	waitFleet(t, f, "gone marked down", func(st map[string]telemetry.ServerState) bool { return !st["gone"].Up })

	stranded, runs := trackJob("b", "hi"), trackJob("a", "hi")
	start := time.Now()
	f.SubmitAll(context.Background(), []*Job{stranded.job, runs.job})
	st := waitFleet(t, f, "the job shown stranded", func(st map[string]telemetry.ServerState) bool { return st["gone"].Stranded == 1 })
	if st["gone"].DownSince.IsZero() || st["gone"].DownReason == "" || st["up"].Stranded != 0 {
		t.Errorf("down server state %+v, up server %+v", st["gone"], st["up"])
	}
	if out := <-runs.done; out.err != nil {
		t.Fatalf("the job a live server offers failed: %v", out.err)
	}
	out := <-stranded.done
	waited := time.Since(start)
	if !errors.Is(out.err, ErrGaveUp) || chat.ClassOf(out.err) != chat.ClassUnavailable {
		t.Fatalf("stranded job ended with %v, want unavailable and ErrGaveUp", out.err)
	}
	if !strings.Contains(out.err.Error(), "gone down since") || !strings.Contains(out.err.Error(), "max_wait") {
		t.Errorf("the error does not say why: %v", out.err)
	}
	if waited < 300*time.Millisecond {
		t.Errorf("given up after %s, before max_wait", waited)
	}
	if st := byServer(f.State()); st["gone"].Stranded != 0 || st["gone"].Queue != 0 {
		t.Errorf("after giving up: %+v", st["gone"])
	}
}

func TestAStrandedJobRunsWhenItsServerComesBack(t *testing.T) {
	s := startSim(t, "s", 1, []string{"a"}, nil, nil)
	f := NewFleet([]ServerConfig{simConfig(s, 1, []string{"a"})}, fastProbes(Options{MaxWait: time.Hour}))
	defer f.Close()
	s.Crash()
	waitFleet(t, f, "s marked down", func(st map[string]telemetry.ServerState) bool { return !st["s"].Up })
	j := trackJob("a", "hi")
	f.SubmitAll(context.Background(), []*Job{j.job})
	waitFleet(t, f, "the job stranded", func(st map[string]telemetry.ServerState) bool { return st["s"].Stranded == 1 })
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if out := <-j.done; out.err != nil {
		t.Fatalf("the job failed after its server came back: %v", out.err)
	}
}
