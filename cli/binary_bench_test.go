package cli

import (
	"bufio"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// The size is the sub-benchmark's name; CI and a plain -bench run only the
// smallest unless PITWALL_BINBENCH=all (or a size, e.g. 100000) says more:
//
//	go test -run '^$' -bench 'BinaryJudged' -benchtime 1x ./cli/
//	PITWALL_BINBENCH=all go test -run '^$' -bench 'BinaryJudged' -benchtime 1x -timeout 1h ./cli/
//
// PITWALL_BINBENCH_PROFILES=DIR writes each run's CPU profile and its heap
// at its peak under DIR (through the binary's PITWALL_CPUPROFILE and
// PITWALL_HEAPPROFILE), and its stderr.
func BenchmarkBinaryJudged(b *testing.B) {
	want := os.Getenv("PITWALL_BINBENCH")
	for _, cells := range []int{4000, 40000, 100000} {
		name := fmt.Sprintf("cells=%d", cells)
		b.Run(name, func(b *testing.B) {
			if cells != 4000 && want != "all" && want != strconv.Itoa(cells) {
				b.Skipf("PITWALL_BINBENCH=all or =%d runs this size (minutes on 2 cores)", cells)
			}
			benchBinary(b, cells/binBenchModels, binBenchModels)
		})
	}
}

func benchBinary(b *testing.B, tests, models int) {
	dir := b.TempDir()
	// A port free a moment ago may be taken by the time the simulator
	// listens (other processes pick free ports too): new ports, again.
	var runConf string
	var stopSim func()
	for try := 0; stopSim == nil; try++ {
		var simConf string
		simConf, runConf = writeBinBenchConfigs(b, dir, tests, models)
		var err error
		if stopSim, err = startBinBenchSim(dir, simConf); err != nil && try == 2 {
			b.Fatal(err)
		}
	}
	defer stopSim()
	profDir := os.Getenv("PITWALL_BINBENCH_PROFILES")
	var peak int64
	var cpu time.Duration
	var judged, size int64
	for i := 0; b.Loop(); i++ {
		db := filepath.Join(dir, fmt.Sprintf("ledger-%d.db", i))
		cmd := exec.Command(bin, "run", runConf, "--headless", "--db", db)
		cmd.Dir = dir
		cmd.Env = os.Environ()
		if profDir != "" {
			cmd.Env = append(cmd.Env, "PITWALL_CPUPROFILE="+filepath.Join(profDir, fmt.Sprintf("cpu-%d-%d.pprof", tests*models, i)),
				"PITWALL_HEAPPROFILE="+filepath.Join(profDir, fmt.Sprintf("heap-%d-%d.pprof", tests*models, i)))
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		if profDir != "" {
			// Its stderr beside its profile: GODEBUG=gctrace=1 says what the collector did.
			_ = os.WriteFile(filepath.Join(profDir, fmt.Sprintf("stderr-%d-%d.txt", tests*models, i)), []byte(stderr.String()), 0o644)
		}
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
			b.Fatalf("pitwall run: %v\n%s", err, tail(stderr.String(), 2000))
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		peak = max(peak, ru.Maxrss<<10) // kilobytes on Linux
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		n, bytes := binBenchLedger(b, db, tests*models)
		judged += n
		size += bytes
		for _, p := range []string{db, db + "-wal", db + "-shm"} {
			os.Remove(p)
		}
	}
	runs := float64(b.N)
	cells := float64(tests*models) * runs
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(cpu.Microseconds())/cells, "cpu-µs/cell")
	b.ReportMetric(float64(size)/float64(judged), "ledger-B/judged-cell")
	b.ReportMetric(float64(judged)/runs, "judged")
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
