package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"pitwall/edges/sim"
	"strings"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
)

// BenchmarkRunCells measures pitwall's own cost per cell: a whole run
// (ledger rows, fleet placement, the streamed HTTP request, checks,
// snapshots) against a simulated server with every delay at zero.
func BenchmarkRunCells(b *testing.B) {
	const tests, models = 50, 4
	dir := b.TempDir()
	writeBenchBattery(b, dir, tests)
	const conf = `name = "bench"
battery = "battery.toml"
models = ["m0", "m1", "m2", "m3"]
[run]
timeout = "10s"
[[servers]]
name = "gpu0"
kind = "sim"
slots = 8
models = ["m0", "m1", "m2", "m3"]
`
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	sims, err := sim.StartConfig(cfg, true)
	if err != nil {
		b.Fatal(err)
	}
	defer sims.Close()
	servers, _ := setup.FleetServers(cfg, nil)
	fleet := gpu.NewFleet(servers, gpu.Options{})
	defer fleet.Close()
	led, err := ledger.Open(filepath.Join(dir, "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer led.Close()

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	runBench(b, cfg, fleet, led, tests*models)
	cells := float64(b.N * tests * models)
	took := time.Since(start)
	b.ReportMetric(cells/took.Seconds(), "cells/s")
	b.ReportMetric(float64(took.Microseconds())/cells, "µs/cell")
}

// BenchmarkRunCellsOwnCPU is BenchmarkRunCells with the simulated server
// in a child process, so that the CPU it reports is pitwall's alone
// (user + system of this process, per cell; the simulator's apart): the
// figure the cost of a cell is judged by. 2,000 cells a run, no judge.
// go test -run '^$' -bench RunCellsOwnCPU -benchtime 3x ./runner/
func BenchmarkRunCellsOwnCPU(b *testing.B) {
	const tests, models = 500, 4
	dir := b.TempDir()
	writeBenchBattery(b, dir, tests)
	conf := "name = \"bench\"\nbattery = \"battery.toml\"\nmodels = [\"m0\", \"m1\", \"m2\", \"m3\"]\n[run]\ntimeout = \"30s\"\n" +
		"[[servers]]\nname = \"gpu0\"\nkind = \"sim\"\nslots = 8\nmodels = [\"m0\", \"m1\", \"m2\", \"m3\"]\n"
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	stopSims := startScaleSims(b, path, cfg)
	servers, err := setup.FleetServers(cfg, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	fleet := gpu.NewFleet(servers, gpu.Options{})
	defer fleet.Close()
	led, err := ledger.Open(filepath.Join(dir, "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer led.Close()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	runBench(b, cfg, fleet, led, tests*models)
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	cells := float64(b.N * tests * models)
	b.ReportMetric(float64(cpu.Microseconds())/cells, "cpu-µs/cell")
	b.ReportMetric(float64(stopSims().Microseconds())/cells, "sim-cpu-µs/cell")
}

// runBench runs cfg b.N times on fleet into led, each run to its end with
// every one of its cells done.
func runBench(b *testing.B, cfg *config.Config, fleet *gpu.Fleet, led *ledger.Ledger, cells int) {
	for i := 0; i < b.N; i++ {
		run, err := New(cfg, Options{Fleet: fleet, Ledger: led, RunID: fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano())})
		if err != nil {
			b.Fatal(err)
		}
		if err := run.Start(); err != nil {
			b.Fatal(err)
		}
		go func() {
			for range run.Snapshots() {
			}
		}()
		last := run.Wait(context.Background())
		run.Close()
		if last.Counts.Done() != cells {
			b.Fatalf("%d of %d cells done", last.Counts.Done(), cells)
		}
	}
}

// writeBenchBattery writes tests sums to dir/battery.toml, each with a
// contains check.
func writeBenchBattery(b *testing.B, dir string, tests int) {
	var battery strings.Builder
	for i := range tests {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%d\"\ncategory = \"reasoning\"\nuser = \"What is %d plus %d?\"\nreference = \"%d\"\n  [[tests.checks]]\n  type = \"contains\"\n  value = \"%d\"\n\n", i, i, i, 2*i, 2*i)
	}
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(battery.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}
