package runner

import (
	"path/filepath"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/internal/pgtest"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
)

// BenchmarkJudgedRunBackends runs the same judged run of 10,000 cells
// (2,500 tests × 4 models, one simulated judge, servers in a child
// process) into a SQLite ledger and into a PostgreSQL one (a throwaway
// local cluster, fsync off as SQLite's WAL is not synced per commit), and
// reports this process's CPU and the wall time per cell of each, and the
// ratios PostgreSQL ÷ SQLite (README, "For a team").
//
//	go test -run '^$' -bench JudgedRunBackends -benchtime 1x ./runner/
func BenchmarkJudgedRunBackends(b *testing.B) {
	const tests, models = 2500, 4
	dir := b.TempDir()
	path := writeScaleConfig(b, dir, tests, models)
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	stopSims := startScaleSims(b, path, cfg)
	defer stopSims()
	servers, err := setup.FleetServers(cfg, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	fleet := gpu.NewFleet(servers, gpu.Options{})
	defer fleet.Close()
	c, err := pgtest.Start()
	if err != nil {
		b.Skip(err)
	}
	defer c.Stop()

	measure := func(db string) (cpu, wall time.Duration) {
		led, err := ledger.Open(db)
		if err != nil {
			b.Fatal(err)
		}
		defer led.Close()
		cpu0, start := cpuTime(b), time.Now()
		runBench(b, cfg, fleet, led, tests*models)
		if err := led.Flush(); err != nil {
			b.Fatal(err)
		}
		return cpuTime(b) - cpu0, time.Since(start)
	}
	b.ResetTimer()
	sqCPU, sqWall := measure(filepath.Join(dir, "ledger.db"))
	pgCPU, pgWall := measure(c.NewDatabase(b))
	b.StopTimer()
	cells := float64(b.N * tests * models)
	b.ReportMetric(float64(sqCPU.Microseconds())/cells, "sqlite-cpu-µs/cell")
	b.ReportMetric(float64(pgCPU.Microseconds())/cells, "pg-cpu-µs/cell")
	b.ReportMetric(float64(sqWall.Microseconds())/cells, "sqlite-wall-µs/cell")
	b.ReportMetric(float64(pgWall.Microseconds())/cells, "pg-wall-µs/cell")
	b.ReportMetric(pgCPU.Seconds()/sqCPU.Seconds(), "cpu-ratio")
	b.ReportMetric(pgWall.Seconds()/sqWall.Seconds(), "wall-ratio")
}
