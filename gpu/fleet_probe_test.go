package gpu

import (
	"net/http"
	"testing"
	"time"

	"pitwall/gpu/client"
	"pitwall/gpu/probe"
)

func TestFleetProbesADownServerWithDoublingBackoff(t *testing.T) {
	f := &Fleet{probes: newProbeTimes(Options{})}
	s := newServer(ServerConfig{Config: client.Config{Name: "gpu0"}, Slots: 1}, nil)
	s.setDown("connection refused")
	if !s.probe.next.IsZero() {
		t.Fatalf("a server just marked down waits %v for its first probe, want none", time.Until(s.probe.next))
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
		4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		f.scheduleLocked(s)
		if s.probe.backoff != w {
			t.Fatalf("after %d failed probes: backoff %v, want %v", i+1, s.probe.backoff, w)
		}
	}
	s.markUp()
	f.scheduleLocked(s)
	if s.probe.backoff != 0 {
		t.Errorf("a server back up keeps a backoff of %v", s.probe.backoff)
	}
	s.setDown("again")
	f.scheduleLocked(s)
	if s.probe.backoff != 250*time.Millisecond {
		t.Errorf("down again: backoff %v, want to start over at 250ms", s.probe.backoff)
	}
}

func TestFleetRejoinsAServerWhenItsModelsAnswer(t *testing.T) {
	listed := ServerConfig{Config: client.Config{Name: "hosted"}, Models: []string{"m"}}
	tests := []struct {
		name string
		cfg  ServerConfig
		r    probe.Result
		want bool
	}{
		{"models listed", ServerConfig{}, probe.Result{Reachable: true, Status: http.StatusOK}, true},
		{"still unreachable", ServerConfig{}, probe.Result{}, false},
		{"503: up but not serving", listed, probe.Result{Reachable: true, Status: http.StatusServiceUnavailable}, false},
		{"404 from a server that must list its models", ServerConfig{}, probe.Result{Reachable: true, Status: http.StatusNotFound}, false},
		{"404 from a hosted API with configured models", listed, probe.Result{Reachable: true, Status: http.StatusNotFound}, true},
		{"500 from a hosted API with configured models", listed, probe.Result{Reachable: true, Status: http.StatusInternalServerError}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rejoinable(tt.cfg, tt.r); got != tt.want {
				t.Errorf("rejoinable = %v, want %v", got, tt.want)
			}
		})
	}
}
