package cli

import (
	"bufio"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// binBenchModels is the models of every size BenchmarkBinaryJudged runs:
// the sizes differ in tests only, so that per cell they do the same work.
const binBenchModels = 100

// BenchmarkBinaryJudged measures the program users run: the built
// `pitwall run --headless`, against an external `pitwall sim` (a child of
// its own, at time scale 0), on a grid of tests × 100 models with one
// judge. It reports what the run's process used, from its rusage once it
// has exited:
//
//	peak-RSS-MB          its peak resident set (Maxrss)
//	cpu-µs/cell          its user + system CPU per cell, startup and summary included
//	ledger-B/judged-cell the ledger's bytes (file and WAL) per judged cell
//	judged               cells with a verdict
//
//	wall-s               its wall time
//
// The size is the sub-benchmark's name; -short runs only the smallest. At
// 100,000 cells it fails past guardPeakMB100k:
//
//	go test -run '^$' -bench 'BinaryJudged' -benchtime 1x -timeout 1h ./cli/
//	go test -run '^$' -bench 'BinaryJudged/cells=4000$' -benchtime 1x ./cli/
//
// PITWALL_BINBENCH_PROFILES=DIR writes each run's CPU profile and its heap
// at its peak under DIR (through the binary's PITWALL_CPUPROFILE and
// PITWALL_HEAPPROFILE), and its stderr.
func BenchmarkBinaryJudged(b *testing.B) {
	for _, cells := range []int{4000, 40000, 100000} {
		b.Run(fmt.Sprintf("cells=%d", cells), func(b *testing.B) {
			skipBig(b, cells)
			peak := benchBinary(b, cells/binBenchModels, binBenchModels)
			if cells == 100000 {
				guard(b, atMost("peak-RSS-MB", peak, guardPeakMB100k))
			}
		})
	}
}

// benchBinary runs the grid b.N times and returns its peak RSS in MB.
func benchBinary(b *testing.B, tests, models int) float64 {
	g := newBinGrid(b, tests, models)
	defer g.stop()
	var peak int64
	var cpu, wall time.Duration
	var judged, size int64
	for i := 0; b.Loop(); i++ {
		r := g.run(b, i)
		peak, cpu, wall = max(peak, r.peak), cpu+r.cpu, wall+r.wall
		judged, size = judged+r.judged, size+r.size
	}
	runs := float64(b.N)
	cells := float64(tests*models) * runs
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(cpu.Microseconds())/cells, "cpu-µs/cell")
	b.ReportMetric(float64(size)/float64(judged), "ledger-B/judged-cell")
	b.ReportMetric(float64(judged)/runs, "judged")
	b.ReportMetric(wall.Seconds()/runs, "wall-s")
	return float64(peak) / (1 << 20)
}

// BenchmarkBinaryFlat holds the CPU per cell of 100,000 judged cells to
// that of 4,000 on a machine whose speed moves from one minute to the
// next: each round runs the 4,000-cell grid three times and the
// 100,000-cell grid once, one after the other, and takes the ratio of
// their CPU per cell; the median round is reported (x-cpu-100k/4k), and
// the ratio of each grid's median CPU per cell over every round
// (x-cpu-pooled), with those medians, the larger grid's peak RSS and
// its wall time. It fails past guardFlat (the median round) and
// guardPeakMB100k; -short skips it.
//
//	go test -run '^$' -bench BinaryFlat -benchtime 3x -timeout 1h ./cli/
func BenchmarkBinaryFlat(b *testing.B) {
	skipBig(b, 100000)
	small := newBinGrid(b, 4000/binBenchModels, binBenchModels)
	defer small.stop()
	large := newBinGrid(b, 100000/binBenchModels, binBenchModels)
	defer large.stop()
	var ratios, smalls, larges, walls []float64
	var peak int64
	for i := 0; b.Loop(); i++ {
		var cpu time.Duration
		for k := range 3 {
			cpu += small.run(b, 3*i+k).cpu
		}
		s := float64(cpu.Microseconds()) / float64(3*small.cells)
		r := large.run(b, i)
		l := float64(r.cpu.Microseconds()) / float64(large.cells)
		peak = max(peak, r.peak)
		ratios, smalls, larges = append(ratios, l/s), append(smalls, s), append(larges, l)
		walls = append(walls, r.wall.Seconds())
	}
	// Two readings of the same runs: each round's ratio (a slow minute
	// under one 100,000-cell run moves it whole), and the ratio of the
	// medians over every round.
	b.ReportMetric(median(ratios), "x-cpu-100k/4k")
	b.ReportMetric(median(larges)/median(smalls), "x-cpu-pooled")
	b.ReportMetric(median(smalls), "cpu-µs/cell-4k")
	b.ReportMetric(median(larges), "cpu-µs/cell-100k")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB-100k")
	b.ReportMetric(median(walls), "wall-s-100k")
	// The figures again, as value-name pairs, for scripts/bench-binary.sh
	// to read where a guard's failure leaves no result line.
	b.Logf("figures: %.3f x-cpu-100k/4k %.1f cpu-µs/cell-4k %.1f cpu-µs/cell-100k %.1f peak-RSS-MB-100k %.2f wall-s-100k",
		median(ratios), median(smalls), median(larges), float64(peak)/(1<<20), median(walls))
	guard(b, atMost("x-cpu-100k/4k", median(ratios), guardFlat))
	guard(b, atMost("peak-RSS-MB-100k", float64(peak)/(1<<20), guardPeakMB100k))
	b.Logf("x-cpu-100k/4k %s, of the medians %.3f; 4,000 cells %s µs/cell; 100,000 cells %s µs/cell",
		spreadIn("%.3f", ratios), median(larges)/median(smalls), spread(smalls), spread(larges))
}

// binGrid is a grid of tests × models on an external simulator of its
// own, for the built binary to run.
type binGrid struct {
	dir, conf string
	cells     int
	stop      func()
}

func newBinGrid(b *testing.B, tests, models int) *binGrid {
	g := &binGrid{dir: b.TempDir(), cells: tests * models}
	// A port free a moment ago may be taken by the time the simulator
	// listens (other processes pick free ports too): new ports, again.
	for try := 0; g.stop == nil; try++ {
		var simConf string
		simConf, g.conf = writeBinBenchConfigs(b, g.dir, tests, models)
		var err error
		if g.stop, err = startBinBenchSim(g.dir, simConf); err != nil && try == 2 {
			b.Fatal(err)
		}
	}
	return g
}

// binRun is what one run of the binary used and left.
type binRun struct {
	cpu, wall          time.Duration
	peak, judged, size int64
}

// run runs `pitwall run --headless` on the grid into a fresh ledger,
// checks that it did every cell, and removes the ledger.
// PITWALL_BINBENCH_PROFILES=DIR writes the run's CPU profile, its heap at
// its peak and its stderr under DIR.
func (g *binGrid) run(b *testing.B, i int) binRun {
	db := filepath.Join(g.dir, fmt.Sprintf("ledger-%d.db", i))
	cmd := exec.Command(underTest(), "run", g.conf, "--headless", "--db", db)
	cmd.Dir = g.dir
	cmd.Env = os.Environ()
	profDir := os.Getenv("PITWALL_BINBENCH_PROFILES")
	if profDir != "" {
		cmd.Env = append(cmd.Env, "PITWALL_CPUPROFILE="+filepath.Join(profDir, fmt.Sprintf("cpu-%d-%d.pprof", g.cells, i)),
			"PITWALL_HEAPPROFILE="+filepath.Join(profDir, fmt.Sprintf("heap-%d-%d.pprof", g.cells, i)))
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if profDir != "" {
		// Its stderr beside its profile: GODEBUG=gctrace=1 says what the collector did.
		_ = os.WriteFile(filepath.Join(profDir, fmt.Sprintf("stderr-%d-%d.txt", g.cells, i)), []byte(stderr.String()), 0o644)
	}
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		b.Fatalf("pitwall run: %v\n%s", err, tail(stderr.String(), 2000))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := binRun{cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall: wall, peak: ru.Maxrss << 10} // kilobytes on Linux
	r.judged, r.size = binBenchLedger(b, db, g.cells)
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		os.Remove(p)
	}
	return r
}

// binBenchLedger checks that the run in db did every cell and returns how
// many it judged and the ledger's size on disk.
func binBenchLedger(b *testing.B, db string, cells int) (judged, size int64) {
	for _, p := range []string{db, db + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	var done int
	if err := conn.QueryRow(`SELECT count(*) FROM cells WHERE status <> ''`).Scan(&done); err != nil {
		b.Fatalf("%s: %v", db, err)
	}
	if err := conn.QueryRow(`SELECT count(*) FROM verdicts WHERE verdict NOT IN ('', 'error')`).Scan(&judged); err != nil {
		b.Fatalf("%s: %v", db, err)
	}
	if done != cells || judged == 0 {
		b.Fatalf("%s: %d of %d cells written, %d judged", db, done, cells, judged)
	}
	return judged, size
}

// writeBinBenchConfigs writes the battery and two configs over it: the
// simulator's (kind = "sim" servers on fixed loopback ports) and the run's,
// which reaches the same servers as any OpenAI-compatible server. Two
// servers, each with room for every model, so that the run measures
// pitwall and not model swaps.
func writeBinBenchConfigs(b *testing.B, dir string, tests, models int) (simConf, runConf string) {
	var battery strings.Builder
	for i := range tests {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%04d\"\ncategory = \"reasoning\"\nuser = \"What is %d plus %d? Answer with the number.\"\n"+
			"criteria = \"The answer is %d, stated plainly.\"\nreference = \"%d\"\n  [[tests.checks]]\n  type = \"contains\"\n  value = \"%d\"\n\n",
			i, i, i, 2*i, 2*i, 2*i)
	}
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(battery.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	names := make([]string, models)
	for i := range names {
		names[i] = fmt.Sprintf("%q", fmt.Sprintf("m%03d", i))
	}
	list := strings.Join(names, ", ")
	head := fmt.Sprintf("name = \"binbench\"\nbattery = \"battery.toml\"\nmodels = [%s]\n[run]\ntimeout = \"60s\"\nretries = 0\n\n", list)
	var simModels strings.Builder
	simModels.WriteString("[[sim.models]]\nname = \"judge\"\njudge_error_rate = 0.05\nsize_gb = 1\n")
	for i := range models {
		fmt.Fprintf(&simModels, "[[sim.models]]\nname = \"m%03d\"\nsize_gb = 1\nskill = %.2f\n", i, 0.5+0.5*float64(i%10)/10)
	}
	var sims, runs strings.Builder
	sims.WriteString(head)
	sims.WriteString(simModels.String())
	runs.WriteString(head)
	for _, s := range []struct{ name, models string }{{"gpu0", list}, {"gpu1", list + `, "judge"`}} {
		url := fmt.Sprintf("http://127.0.0.1:%d/v1", freePort(b))
		fmt.Fprintf(&sims, "[[servers]]\nname = %q\nkind = \"sim\"\nurl = %q\nslots = 8\nmodels = [%s]\n  [servers.sim]\n  gpus = [{ vram_gb = %d }]\n",
			s.name, url, s.models, models+2)
		fmt.Fprintf(&runs, "[[servers]]\nname = %q\nkind = \"openai\"\nurl = %q\nslots = 8\nmodels = [%s]\n", s.name, url, s.models)
	}
	runs.WriteString("[scoring]\nmode = \"judge\"\n[[scoring.judges]]\nname = \"j\"\nmodel = \"judge\"\nserver = \"gpu1\"\n")
	simConf, runConf = filepath.Join(dir, "sim.toml"), filepath.Join(dir, "run.toml")
	for p, s := range map[string]string{simConf: sims.String(), runConf: runs.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return simConf, runConf
}

// freePort is a loopback port free a moment ago.
func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startBinBenchSim starts `pitwall sim conf --time-scale 0` and waits until
// it serves; stop interrupts it and waits for it to exit.
func startBinBenchSim(dir, conf string) (stop func(), err error) {
	cmd := exec.Command(bin, "sim", conf, "--time-scale", "0")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "serving") {
			break
		}
	}
	if sc.Err() != nil || !strings.HasPrefix(sc.Text(), "serving") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("pitwall sim did not start serving (%v): %s", sc.Err(), stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}, nil
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
