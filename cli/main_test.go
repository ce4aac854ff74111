package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bin is the pitwall binary the end-to-end tests run, built once.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pitwall-e2e")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "pitwall")
	// The binary is the root package's, as users build it.
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic("building pitwall: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// pitwall runs the binary in dir with env added and returns its exit code,
// stdout and stderr.
func pitwall(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runBin(t, dir, env, args...)
}

// pitwallB is pitwall for benchmarks.
func pitwallB(b *testing.B, dir string, args ...string) (int, string, string) {
	b.Helper()
	return runBin(b, dir, nil, args...)
}

func runBin(t testing.TB, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

type exportDoc struct {
	Run struct {
		ID, Status string
	} `json:"run"`
	Cells []struct {
		Model, Test, Status string
		Verdict             *string
	} `json:"cells"`
	Requests []struct {
		Purpose, Status, Server string
		CompletionTokens        int `json:"completion_tokens"`
	} `json:"requests"`
}

func exportLast(t *testing.T, dir string) exportDoc {
	t.Helper()
	code, out, errOut := pitwall(t, dir, nil, "export", "last", "--format", "json")
	if code != 0 {
		t.Fatalf("export exited %d: %s", code, errOut)
	}
	var x exportDoc
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, out)
	}
	return x
}

func demoPath(t *testing.T) string {
	p, err := filepath.Abs("../examples/demo.toml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDemoHeadlessRunsEveryCellAndJudgesTheCompletedOnes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, stdout, stderr := pitwall(t, dir, []string{"PITWALL_SIM_TIME_SCALE=0.02"}, "run", demoPath(t), "--headless")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want 0 or 1\nstderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "weather_tool") || !strings.Contains(stderr, "[1/80]") {
		t.Errorf("no grid on stdout or progress on stderr:\n%s\n%s", stdout, stderr)
	}
	x := exportLast(t, dir)
	status := map[string]int{}
	judged := 0
	for _, c := range x.Cells {
		status[c.Status]++
		if c.Status == "completed" && c.Verdict != nil {
			judged++
		}
	}
	inference, judge := 0, 0
	for _, q := range x.Requests {
		switch q.Status {
		case "completed", "error", "canceled":
		default:
			t.Errorf("a %s request is left %s", q.Purpose, q.Status)
		}
		if q.Purpose == "inference" {
			inference++
		}
		if q.Purpose == "judge" {
			judge++
		}
		// A judge answer taken from an identical request (in flight, or in
		// the ledger) was not paid for again: it counts no tokens.
		paid := q.Server != "(shared)" && q.Server != "(cache)"
		if q.Status == "completed" && q.Purpose != "warmup" && paid && q.CompletionTokens == 0 {
			t.Errorf("a completed %s request counted no tokens", q.Purpose)
		}
	}
	if inference != len(x.Cells) {
		t.Errorf("%d inference requests for %d cells (the demo does not retry)", inference, len(x.Cells))
	}
	if judge != status["completed"] {
		t.Errorf("%d judge requests for %d completed cells", judge, status["completed"])
	}
	if judged != status["completed"] {
		t.Errorf("%d of %d completed cells have a verdict", judged, status["completed"])
	}
	for _, s := range []string{"completed", "failed", "error"} {
		if status[s] == 0 {
			t.Errorf("no %s cell in the demo: %v", s, status)
		}
	}

	// The same run, from the ledger alone.
	show, grid, errOut := pitwall(t, dir, nil, "show", "last", "--headless")
	if show != code || !strings.Contains(grid, "weather_tool") || !strings.Contains(grid, x.Run.ID) {
		t.Errorf("show last: exit %d (run exited %d), stderr %q:\n%s", show, code, errOut, grid)
	}
	runs, list, _ := pitwall(t, dir, nil, "runs")
	if runs != 0 || !strings.Contains(list, x.Run.ID) || !strings.Contains(list, "completed") {
		t.Errorf("runs: exit %d:\n%s", runs, list)
	}
}

func TestInterruptStopsAHeadlessRunAndLeavesNothingOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", demoPath(t), "--headless")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PITWALL_SIM_TIME_SCALE=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first finished cell: the run is under way.
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "[1/") {
			break
		}
	}
	go func() {
		for lines.Scan() {
		}
	}()
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	took := time.Since(sent)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 1 && code != 130 {
		t.Errorf("exit %d after SIGINT, want 1 or 130", code)
	}
	if took > 2*time.Second {
		t.Errorf("took %s to stop after SIGINT, want under 2s", took)
	}
	x := exportLast(t, dir)
	if x.Run.Status != "stopped" {
		t.Errorf("run status %q, want stopped", x.Run.Status)
	}
	for _, q := range x.Requests {
		if q.Status == "queued" || q.Status == "running" {
			t.Errorf("a %s request is left %s after the stop", q.Purpose, q.Status)
		}
	}
	// `runs` reports what the process returned, not a code computed again.
	_, out, _ := pitwall(t, dir, nil, "runs", "-n", "1", "--json")
	var runs []runSummary
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0].ExitCode == nil || *runs[0].ExitCode != code {
		t.Errorf("runs after SIGINT: %v\n%s; want exit code %d, what the process returned", err, out, code)
	}
}

// A second interrupt quits at once, but through the same closing as the
// first: the run records its end and the ledger is closed (its WAL folded
// back into the database), where it used to be left running.
func TestSecondInterruptQuitsAndStillClosesTheLedger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", demoPath(t), "--headless")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PITWALL_SIM_TIME_SCALE=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "[1/") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "pitwall: stopping") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 1 && code != 130 {
		t.Errorf("exit %d after two SIGINTs, want 1 or 130", code)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pitwall", "ledger.db-wal")); err == nil {
		t.Errorf("the ledger's WAL is still there: the ledger was not closed")
	}
	x := exportLast(t, dir)
	if x.Run.Status != "stopped" {
		t.Errorf("run status %q, want stopped", x.Run.Status)
	}
	for _, q := range x.Requests {
		if q.Status == "queued" || q.Status == "running" {
			t.Errorf("a %s request is left %s after the second interrupt", q.Purpose, q.Status)
		}
	}
}

func TestMainInProcess(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := Main(nil, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "Usage:") {
		t.Errorf("no command: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	if code := Main([]string{"version"}, nil, &out, &errOut); code != 0 || out.String() != "pitwall "+version+"\n" {
		t.Errorf("version: exit %d, stdout %q", code, out.String())
	}
	errOut.Reset()
	if code := Main([]string{"runs", "--db", filepath.Join(t.TempDir(), "none.db")}, nil, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "no ledger at") {
		t.Errorf("runs without a ledger: exit %d, stderr %q", code, errOut.String())
	}
}

func TestValidateNamesTheFileLineAndField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	battery := "[[tests]]\nid = \"a\"\nuser = \"hi\"\n\n[[tests]]\nid = \"a\"\nuser = \"again\"\n"
	if err := os.WriteFile(filepath.Join(dir, "dup.toml"), []byte(battery), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.toml"), []byte("[[tests]]\nid = \"a\"\nuser = \"hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "name = \"x\"\nmodels = [\"m\"]\n[[servers]]\nname = \"s\"\nkind = \"sim\"\nmodels = [\"m\"]\n"
	cases := []struct {
		name, config string
		want         []string
	}{
		{"unknown key", "battery = \"ok.toml\"\n" + base + "[run]\nmax_tokenz = 5\n", []string{"pitwall.toml:9", "max_tokenz", "max_tokens"}},
		{"wrong type", "battery = \"ok.toml\"\n" + base + "slots = \"two\"\n", []string{"pitwall.toml:8", "slots"}},
		{"missing battery", "battery = \"nope.toml\"\n" + base, []string{"pitwall.toml", "battery", "nope.toml"}},
		{"duplicate test id", "battery = \"dup.toml\"\n" + base, []string{"dup.toml:6", "\"a\""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "pitwall.toml"), []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := pitwall(t, dir, nil, "validate", "pitwall.toml")
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("message does not name %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestUsageAndUnknownCommand(t *testing.T) {
	t.Parallel()
	code, _, stderr := pitwall(t, t.TempDir(), nil, "frobnicate")
	if code != 2 || !strings.Contains(stderr, "unknown command") || !strings.Contains(stderr, "pitwall run") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = pitwall(t, t.TempDir(), nil, "rejudeg", "last")
	if code != 2 || !strings.Contains(stderr, "did you mean `pitwall rejudge`?") {
		t.Errorf("a mistyped command: exit %d, stderr %q; want 2 and the command meant", code, stderr)
	}
	code, out, _ := pitwall(t, t.TempDir(), nil, "ledger", "--help")
	if code != 0 || !strings.Contains(out, "pitwall ledger copy FROM TO") {
		t.Errorf("ledger --help: exit %d, stdout %q; want 0 and its usage", code, out)
	}
	code, out, _ = pitwall(t, t.TempDir(), nil, "run", "--help")
	_ = out
	if code != 0 {
		t.Errorf("run --help exited %d", code)
	}
	code, _, stderr = pitwall(t, t.TempDir(), nil, "export", "last")
	if code != 2 || !strings.Contains(stderr, "no ledger") {
		t.Errorf("export without a ledger: exit %d, %q", code, stderr)
	}
}

func TestServersProbesTheSimulatedFleet(t *testing.T) {
	t.Parallel()
	code, out, stderr := pitwall(t, t.TempDir(), nil, "servers", demoPath(t), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Servers []struct {
			Server    string   `json:"server"`
			Reachable bool     `json:"reachable"`
			Kind      string   `json:"kind"`
			Models    []string `json:"models"`
			GPUs      []struct {
				Name           string  `json:"name"`
				MemoryTotalMiB float64 `json:"memory_total_mib"`
			} `json:"gpus"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(doc.Servers) != 2 {
		t.Fatalf("%d servers, want the demo's 2:\n%s", len(doc.Servers), out)
	}
	// Each of the demo's models has one server (so that a seed reproduces
	// the run): five models and two judges between the two.
	offered := 0
	for _, s := range doc.Servers {
		offered += len(s.Models)
		if !s.Reachable || s.Kind == "" || len(s.Models) < 3 || len(s.GPUs) != 1 || s.GPUs[0].MemoryTotalMiB != 24*1024 {
			t.Errorf("server %+v: want reachable, a kind, its models and one 24 GB GPU", s)
		}
	}
	if offered != 7 {
		t.Errorf("the servers offer %d models between them, want the demo's 7", offered)
	}
	code, table, _ := pitwall(t, t.TempDir(), nil, "servers", demoPath(t))
	if code != 0 || !strings.Contains(table, "gpu0") || !strings.Contains(table, "Simulated RTX 4090") {
		t.Errorf("servers table: exit %d\n%s", code, table)
	}
}

func TestSimServesTheFleetToOtherClients(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(bin, "sim", demoPath(t))
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := startServer(t, cmd); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	urls := map[string]string{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) >= 2 && strings.HasPrefix(f[1], "http://127.0.0.1:") {
			urls[f[0]] = f[1]
		}
		if strings.HasPrefix(lines.Text(), "serving") {
			break
		}
	}
	if len(urls) != 2 {
		t.Fatalf("sim printed %v, want the demo's two servers' URLs", urls)
	}
	body := `{"model":"qwen3-8b","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"What is 17 times 23? Give only the number."}]}`
	resp, err := http.Post(urls["gpu0"]+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if resp.StatusCode != 200 || !strings.Contains(text, `"usage"`) || !strings.HasSuffix(strings.TrimSpace(text), "data: [DONE]") {
		t.Errorf("streamed chat: HTTP %d\n%s", resp.StatusCode, text)
	}
	resp, err = http.Post(urls["gpu0"]+"/chat/completions", "application/json", strings.NewReader(`{"model":"nope","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(raw), `"error"`) {
		t.Errorf("unknown model: HTTP %d %s, want 404 with an OpenAI error body", resp.StatusCode, raw)
	}
}

// An interrupt as early as the ledger exists, while the run is still being
// set up, stops the run: it is not lost between set-up and the first phase
// that listens (the process used to go on running the whole battery).
func TestAnInterruptDuringSetUpStopsTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", demoPath(t), "--headless")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PITWALL_SIM_TIME_SCALE=1")
	var stderr safeBuffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, ".pitwall", "ledger.db")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the run went on a minute after an interrupt during set-up\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit %v after an interrupt during set-up, want %d\n%s", err, exitInterrupted, stderr.String())
	}
	if x := exportLast(t, dir); x.Run.Status != "stopped" {
		t.Errorf("run status %q, want stopped", x.Run.Status)
	}
}
