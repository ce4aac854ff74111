package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"pitwall/edges/sim"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
)

// scaleSimEnv, when set to a config path, makes TestScaleSimChild serve
// that config's simulated servers for BenchmarkScale100kJudged.
const scaleSimEnv = "PITWALL_SCALE_SIM_CHILD"

// scaleSize is the grid BenchmarkScale100kJudged runs: 1,000 tests × 100
// models by default; PITWALL_SCALE_TESTS and PITWALL_SCALE_MODELS shrink it
// for a quick look.
func scaleSize(tb testing.TB) (tests, models int) {
	tests, models = 1000, 100
	for _, v := range []struct {
		env string
		dst *int
	}{{"PITWALL_SCALE_TESTS", &tests}, {"PITWALL_SCALE_MODELS", &models}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				tb.Fatalf("%s=%q: want a whole number >= 1", v.env, s)
			}
			*v.dst = n
		}
	}
	return tests, models
}

// writeScaleConfig writes a battery of tests and a config running it on
// models simulated models, judged by one simulated judge, and returns the
// config's path. Two servers, each with room for every model, so that the
// run measures pitwall and not model swaps.
func writeScaleConfig(tb testing.TB, dir string, tests, models int) string {
	var battery strings.Builder
	for i := range tests {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%04d\"\ncategory = \"reasoning\"\nuser = \"What is %d plus %d? Answer with the number.\"\n"+
			"criteria = \"The answer is %d, stated plainly.\"\nreference = \"%d\"\n  [[tests.checks]]\n  type = \"contains\"\n  value = \"%d\"\n\n",
			i, i, i, 2*i, 2*i, 2*i)
	}
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(battery.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	names := make([]string, models)
	var conf strings.Builder
	for i := range names {
		names[i] = fmt.Sprintf("%q", fmt.Sprintf("m%03d", i))
	}
	list := strings.Join(names, ", ")
	fmt.Fprintf(&conf, "name = \"scale\"\nbattery = \"battery.toml\"\nmodels = [%s]\n", list)
	conf.WriteString("[run]\ntimeout = \"60s\"\nretries = 0\n\n[[sim.models]]\nname = \"judge\"\njudge_error_rate = 0.05\nsize_gb = 1\n")
	for i := range models {
		fmt.Fprintf(&conf, "[[sim.models]]\nname = \"m%03d\"\nsize_gb = 1\nskill = %.2f\n", i, 0.5+0.5*float64(i%10)/10)
	}
	vram := float64(models + 2)
	for _, s := range []struct{ name, models string }{{"gpu0", list}, {"gpu1", list + `, "judge"`}} {
		fmt.Fprintf(&conf, "[[servers]]\nname = %q\nkind = \"sim\"\nslots = 8\nmodels = [%s]\n  [servers.sim]\n  gpus = [{ vram_gb = %g }]\n",
			s.name, s.models, vram)
	}
	conf.WriteString("[scoring]\nmode = \"judge\"\n[[scoring.judges]]\nname = \"j\"\nmodel = \"judge\"\nserver = \"gpu1\"\n")
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestScaleSimChild is not a test: run by BenchmarkScale100kJudged with
// scaleSimEnv set, it serves the config's simulated servers from this
// process, prints "sim INDEX URL" for each, then "ready", and serves until
// its stdin closes. Without the variable it returns at once.
func TestScaleSimChild(t *testing.T) {
	t.Parallel()
	path := os.Getenv(scaleSimEnv)
	if path == "" {
		return
	}
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	sims, err := sim.StartConfig(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sims.Close()
	for i, s := range cfg.Servers {
		fmt.Printf("sim %d %s\n", i, s.URL)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startScaleSims starts the child that serves path's simulated servers and
// points cfg's servers at it. stop ends the child and returns its CPU time.
func startScaleSims(b *testing.B, path string, cfg *config.Config) (stop func() time.Duration) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestScaleSimChild$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), scaleSimEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			break
		}
		var i int
		var u string
		if _, err := fmt.Sscanf(line, "sim %d %s", &i, &u); err != nil || i < 0 || i >= len(cfg.Servers) {
			_ = cmd.Process.Kill()
			b.Fatalf("sim child printed %q", line)
		}
		cfg.Servers[i].URL = u
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return func() time.Duration {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("sim child: %v", err)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is this process's peak resident set since the last resetPeakRSS,
// in bytes (VmHWM).
func peakRSS(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM: %q", line)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// resetPeakRSS starts VmHWM again from the current RSS, so that the peak
// measured is the run's, not the setup's.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS (%v): it counts the setup too", err)
	}
}

// heapAtPeak, when PITWALL_SCALE_HEAPPROFILE names a file, writes a heap
// profile there each time the heap in use has grown a tenth past the last
// one written, so that `go tool pprof -sample_index=inuse_space` shows
// what holds memory at the peak. stop ends it.
func heapAtPeak(b *testing.B) (stop func()) {
	path := os.Getenv("PITWALL_SCALE_HEAPPROFILE")
	if path == "" {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		var last uint64
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse < last+last/10 {
				continue
			}
			last = ms.HeapInuse
			f, err := os.Create(path)
			if err == nil {
				err = errors.Join(pprof.WriteHeapProfile(f), f.Close())
			}
			if err != nil {
				b.Errorf("PITWALL_SCALE_HEAPPROFILE: %v", err)
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// BenchmarkScale100kJudged runs 100,000 cells (1,000 tests × 100 models)
// with a judge through the real HTTP path, against simulated servers at
// zero delay that run in a child process, so that what it reports is
// pitwall's alone: peak RSS (VmHWM) of the run, CPU (user + system) per
// cell and per judged cell, and the ledger's bytes per judged cell once
// it is closed (checkpointed). The simulator's CPU is reported apart.
// Run it once: go test -run '^$' -bench Scale100kJudged -benchtime 1x ./runner/
// (PITWALL_SCALE_KEEP=FILE keeps a copy of the ledger;
// PITWALL_SCALE_HEAPPROFILE=FILE writes the heap at its peak, at a cost
// in the CPU figures.)
func BenchmarkScale100kJudged(b *testing.B) {
	tests, models := scaleSize(b)
	dir := b.TempDir()
	path := writeScaleConfig(b, dir, tests, models)
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	stopSims := startScaleSims(b, path, cfg)
	servers, err := setup.FleetServers(cfg, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	dbPath := filepath.Join(dir, "ledger.db")
	var cells, judged, peak int64
	var cpu, wall time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		os.Remove(dbPath)
		os.Remove(dbPath + "-wal")
		os.Remove(dbPath + "-shm")
		led, err := ledger.Open(dbPath)
		if err != nil {
			b.Fatal(err)
		}
		fleet := gpu.NewFleet(servers, gpu.Options{})
		// A run id of the usual length (NewRunID): it is in every row.
		run, err := New(cfg, Options{Fleet: fleet, Ledger: led})
		if err != nil {
			b.Fatal(err)
		}
		resetPeakRSS(b)
		stopHeap := heapAtPeak(b)
		cpu0, t0 := cpuTime(b), time.Now()
		b.StartTimer()
		if err := run.Start(); err != nil {
			b.Fatal(err)
		}
		go func() {
			for range run.Snapshots() {
			}
		}()
		last := run.Wait(context.Background())
		run.Close()
		b.StopTimer()
		stopHeap()
		cpu += cpuTime(b) - cpu0
		wall += time.Since(t0)
		peak = max(peak, peakRSS(b))
		fleet.Close()
		if err := led.Close(); err != nil {
			b.Fatal(err)
		}
		if got := last.Counts.Done(); got != tests*models {
			b.Fatalf("%d of %d cells done (%s)", got, tests*models, last.Message)
		}
		cells += int64(tests * models)
		judged += int64(last.Counts.Judged)
		if last.Counts.Judged == 0 {
			b.Fatalf("no cell was judged: %+v", last.Counts)
		}
	}
	simCPU := stopSims()
	if keep := os.Getenv("PITWALL_SCALE_KEEP"); keep != "" {
		// The last run's ledger, for a look at what it holds.
		data, err := os.ReadFile(dbPath)
		if err != nil || os.WriteFile(keep, data, 0o644) != nil {
			b.Errorf("PITWALL_SCALE_KEEP=%s: cannot copy %s (%v)", keep, dbPath, err)
		}
	}
	var size int64
	for _, p := range []string{dbPath, dbPath + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(cells)/n, "cells")
	b.ReportMetric(float64(judged)/n, "judged")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(cpu.Microseconds())/float64(cells), "cpu-µs/cell")
	b.ReportMetric(float64(simCPU.Microseconds())/float64(cells), "sim-cpu-µs/cell")
	b.ReportMetric(float64(wall.Microseconds())/float64(cells), "wall-µs/cell")
	// The last run's ledger: each run starts from an empty file.
	b.ReportMetric(float64(size)*n/float64(judged), "ledger-B/judged-cell")
}
