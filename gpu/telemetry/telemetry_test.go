package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// waitTelemetry waits, on the readings themselves, until cond holds.
func waitTelemetry(t *testing.T, tel *Watcher, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ch := tel.Updated()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("telemetry never got there; GPUs = %+v", tel.GPUs())
		}
	}
}

func TestTelemetryWithoutSourceReportsNoGPUs(t *testing.T) {
	tests := []struct {
		name   string
		source string
	}{
		{"none asked for", "none"},
		{"nothing on PATH", "auto"},
		{"nvidia asked for but missing", "nvidia"},
		{"rocm asked for but missing", "rocm"},
		{"unknown source", "carrier-pigeon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var looked atomic.Int32
			tel := Start(t.Context(), Options{
				Source: tt.source,
				LookPath: func(string) (string, error) {
					looked.Add(1)
					return "", os.ErrNotExist
				},
			})
			defer tel.Close()
			if got := tel.Source(); got != SourceNone {
				t.Errorf("Source = %q, want %q", got, SourceNone)
			}
			if got := tel.GPUs(); got != nil {
				t.Errorf("GPUs = %+v, want none", got)
			}
			select {
			case <-tel.done:
			default:
				t.Error("a telemetry with no source left a goroutine running")
			}
			if tt.source == "none" && looked.Load() != 0 {
				t.Error("source none still looked for programs")
			}
		})
	}
}

func TestTelemetryPollsSimulatorURL(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "probe", "testdata", "backends", "sim-gpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sim/gpus" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	tel := Start(t.Context(), Options{
		Source:   "url:" + srv.URL + "/sim/gpus",
		Interval: 10 * time.Millisecond,
	})
	waitTelemetry(t, tel, func() bool { return len(tel.GPUs()) == 2 && hits.Load() >= 2 })
	tel.Close()

	if got := tel.Source(); got != SourceSim {
		t.Errorf("Source = %q, want %q", got, SourceSim)
	}
	got := tel.GPUs()
	want := []GPUState{
		{Index: 0, UUID: "GPU-sim-0", Name: "Simulated RTX 4090", UtilPct: 87.5, MemUsedMiB: 20480, MemTotalMiB: 24576, TempC: 71, PowerW: 402.5},
		{Index: 1, UUID: "GPU-sim-1", Name: "Simulated RTX 4090", MemUsedMiB: 512, MemTotalMiB: 24576, TempC: 35, PowerW: 21},
	}
	for i := range want {
		if got[i].At.IsZero() {
			t.Errorf("GPU %d has no reading time", i)
		}
		got[i].At = time.Time{}
		if got[i] != want[i] {
			t.Errorf("GPU %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	// Close waited for the poller: nothing asks the server any more.
	n := hits.Load()
	srv.Close()
	if hits.Load() != n {
		t.Error("the poller kept polling after Close")
	}
}

func TestPollSimGPUsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/garbage":
			w.Write([]byte("<html>not json</html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, path := range []string{"/missing", "/garbage"} {
		if _, err := PollSim(t.Context(), nil, srv.URL+path); err == nil {
			t.Errorf("%s: no error", path)
		}
	}
}
