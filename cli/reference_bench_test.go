package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"pitwall/edges/sim"
	"pitwall/gpu/des"
	"pitwall/gpu/placement"
)

// BenchmarkReferenceFleetHeadless runs the scheduling benchmark's reference
// scenario (examples/reference-fleet.toml: 4 GPUs, 12 models, 200 tests, a
// jury of two) for real: `pitwall run --headless` over HTTP against the
// simulator at time scale 0.01, and compares the makespan the ledger
// records with the virtual-time figure of the same policy.
//
//	x-virtual  real makespan ÷ (virtual makespan × time scale); the target is 0.75..1.25
//	real-s     the real makespan in wall seconds
//
// go test -run xxx -bench BenchmarkReferenceFleetHeadless -benchtime 1x ./cli/
func BenchmarkReferenceFleetHeadless(b *testing.B) {
	const scale = 0.01
	virtual, err := des.Simulate(des.Reference(sim.StreamRate, false), placement.Default, des.JudgingTwoPhase)
	if err != nil {
		b.Fatal(err)
	}
	config, err := filepath.Abs("../examples/reference-fleet.toml")
	if err != nil {
		b.Fatal(err)
	}
	var real time.Duration
	for b.Loop() {
		dir := b.TempDir()
		code, _, stderr := pitwallB(b, dir, "run", config, "--headless", "--time-scale", "0.01")
		if code != 0 && code != 1 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
		_, out, _ := pitwallB(b, dir, "export", "last", "--format", "json")
		var x struct {
			Run struct {
				StartedAt time.Time  `json:"started_at"`
				EndedAt   *time.Time `json:"ended_at"`
				Status    string
			} `json:"run"`
		}
		if err := json.Unmarshal([]byte(out), &x); err != nil || x.Run.EndedAt == nil || x.Run.Status != "completed" {
			b.Fatalf("export: %v %+v", err, x.Run)
		}
		real = x.Run.EndedAt.Sub(x.Run.StartedAt)
	}
	want := time.Duration(float64(virtual.Makespan) * scale)
	b.ReportMetric(real.Seconds(), "real-s")
	b.ReportMetric(real.Seconds()/want.Seconds(), "x-virtual")
	b.Logf("real %s, virtual %s × %.2f = %s", real.Round(time.Millisecond), virtual.Makespan.Round(time.Second), scale, want.Round(time.Millisecond))
}
