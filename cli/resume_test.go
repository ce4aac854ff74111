package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"pitwall/runner/ledger"
)

// resumeBattery is eight short tests: 24 cells on three models.
const resumeBattery = `
[[tests]]
id = "colour"
user = "Name a primary colour."
criteria = "Names red, blue or yellow."

[[tests]]
id = "capital"
user = "What is the capital of Japan? Answer in one word."
criteria = "Answers Tokyo."
reference = "Tokyo"

[[tests]]
id = "sum"
user = "What is 17 times 23? Give only the number."
criteria = "Answers 391."
reference = "391"

[[tests]]
id = "haiku"
user = "Write a haiku about rain."
criteria = "Three lines about rain."

[[tests]]
id = "json"
user = "Give a JSON object with a key name whose value is Ada."
criteria = "A JSON object with name = Ada."

[[tests]]
id = "planet"
user = "Which planet is closest to the sun? One word."
criteria = "Answers Mercury."
reference = "Mercury"

[[tests]]
id = "opposite"
user = "What is the opposite of hot? One word."
criteria = "Answers cold."
reference = "cold"

[[tests]]
id = "days"
user = "How many days are in a leap year? Only the number."
criteria = "Answers 366."
reference = "366"
`

// resumeSim is the fleet `pitwall sim` serves: two servers with room for
// every model. Its %[1]s is each server's faults line: none, for a run that is the
// same run every time.
const resumeSim = `
name    = "resume-sim"
battery = "battery.toml"
models  = ["m1", "m2", "m3"]

[run]
seed = 7

[[sim.models]]
name = "m1"
size_gb = 2.0
tokens_per_sec = 80
ttft = "150ms"
reply_tokens = 40
skill = 0.8

[[sim.models]]
name = "m2"
size_gb = 2.0
tokens_per_sec = 100
ttft = "100ms"
reply_tokens = 40
skill = 0.6

[[sim.models]]
name = "m3"
size_gb = 2.0
tokens_per_sec = 120
ttft = "100ms"
reply_tokens = 40
skill = 0.4

[[sim.models]]
name = "judge-a"
size_gb = 2.0
tokens_per_sec = 150
ttft = "100ms"
reply_tokens = 30

[[servers]]
name   = "s0"
kind   = "sim"
slots  = 2
models = ["m1", "m2", "m3", "judge-a"]
  [servers.sim]
  backend   = "lmstudio"
  load_gbps = 10.0
  gpus      = [{ name = "Sim", vram_gb = 80 }]
  %[1]s

[[servers]]
name   = "s1"
kind   = "sim"
slots  = 2
models = ["m1", "m2", "m3"]
  [servers.sim]
  backend   = "lmstudio"
  load_gbps = 10.0
  gpus      = [{ name = "Sim", vram_gb = 80 }]
  %[1]s
`

// resumeRun is the run's config: the servers `pitwall sim` serves, as a
// user points pitwall at LM Studio, and one judge.
const resumeRun = `
name    = "resume"
battery = "battery.toml"
models  = ["m1", "m2", "m3"]

[run]
seed        = 7
retries     = 0
timeout     = "60s"
max_tokens  = 256
temperature = 0.0
judging     = "two-phase"

[[servers]]
name  = "s0"
kind  = "lmstudio"
url   = "%s"
slots = 2

[[servers]]
name  = "s1"
kind  = "lmstudio"
url   = "%s"
slots = 2

[scoring]
mode    = "judge"
samples = 1

[[scoring.judges]]
name   = "a"
model  = "judge-a"
server = "s0"
`

var resumeModels = []string{"m1", "m2", "m3"}

// resumeFleet writes the battery and the configs in dir, serves the fleet
// with the given faults line ("" for none) and returns it with the run
// config's path.
func resumeFleet(t *testing.T, dir, faults string) (*simFleet, string) {
	t.Helper()
	writeFile(t, dir, "battery.toml", resumeBattery)
	writeFile(t, dir, "sim.toml", fmt.Sprintf(resumeSim, faults))
	f := startSimFleet(t, dir, "sim.toml", "0.2")
	return f, writeFile(t, dir, "run.toml", fmt.Sprintf(resumeRun, f.urls["s0"], f.urls["s1"]))
}

// killRun starts `pitwall run config --headless` in dir and SIGKILLs it at
// the first progress line on which at holds.
func killRun(t *testing.T, dir, config string, at func(line string) bool) {
	t.Helper()
	cmd := exec.Command(bin, "run", config, "--headless")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	lines := bufio.NewScanner(stderr)
	killed := false
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if at(lines.Text()) {
			killed = cmd.Process.Kill() == nil // SIGKILL: nothing of pitwall runs after it
			break
		}
	}
	go func() {
		for lines.Scan() {
		}
	}()
	cmd.Wait()
	if !killed {
		t.Fatalf("the run ended before the line to kill it at:\n%s", seen.String())
	}
}

// interrupted checks what `pitwall runs`, the first reader after the kill,
// shows of run id: interrupted, and no request of it left open.
func checkInterrupted(t *testing.T, dir, db string) fullExport {
	t.Helper()
	code, list, errOut := pitwall(t, dir, nil, "runs", "--db", db)
	if code != 0 {
		t.Fatalf("runs exited %d: %s", code, errOut)
	}
	x := exportRun(t, dir, db, "last")
	var line string
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, x.Run.ID) {
			line = l
		}
	}
	if f := strings.Fields(line); len(f) < 3 || !strings.Contains(line, " interrupted ") || strings.Contains(line, " running ") {
		t.Errorf("runs after the SIGKILL, want run %s interrupted:\n%s", x.Run.ID, list)
	}
	if x.Run.Status != ledger.RunInterrupted {
		t.Errorf("export: run status %q, want interrupted", x.Run.Status)
	}
	for _, q := range x.Requests {
		switch q.Status {
		case ledger.StatusQueued, ledger.StatusRunning, "submitted":
			t.Errorf("request %d (%s %s) is left %s once the run was read", q.ID, q.Purpose, q.Model, q.Status)
		}
	}
	return x
}

func TestResumeAfterSIGKILLSendsOnlyWhatWasNotDone(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		kill func(line string) bool // the progress line to kill the run at
		// judging: the kill came after every inference request ended.
		judging bool
	}{
		{"mid-inference", func(l string) bool { return strings.HasPrefix(l, "[4/24]") }, false},
		{"mid-judging", func(l string) bool { return strings.HasPrefix(l, "[judge 4/") }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own folder, fleet and ledgers
			dir := t.TempDir()
			fleet, config := resumeFleet(t, dir, "")

			// The run that never stops, in a ledger of its own.
			refDB := filepath.Join(dir, "ref.db")
			refCode, _, refErr := pitwall(t, dir, nil, "run", config, "--headless", "--db", refDB)
			if refCode != 0 && refCode != 1 {
				t.Fatalf("the reference run exited %d:\n%s", refCode, refErr)
			}
			want := exportRun(t, dir, refDB, "last")

			db := filepath.Join(dir, ".pitwall", "ledger.db")
			killRun(t, dir, config, tc.kill)
			atKill := fleet.requests(t)
			x := checkInterrupted(t, dir, db)
			id := x.Run.ID
			was := requestsOf(t, db, id)

			// `run` on the same config says how to resume it.
			led, err := ledger.OpenReadOnly(db)
			if err != nil {
				t.Fatal(err)
			}
			var note, other bytes.Buffer
			noteInterrupted(led, config, &note)
			noteInterrupted(led, filepath.Join(dir, "another.toml"), &other)
			led.Close()
			if !strings.Contains(note.String(), "`pitwall resume "+id+"`") || strings.Count(note.String(), "\n") != 1 {
				t.Errorf("run on the interrupted run's config says %q, want one line naming `pitwall resume %s`", note.String(), id)
			}
			if other.Len() != 0 {
				t.Errorf("run on another config says %q, want nothing", other.String())
			}

			code, _, errOut := pitwall(t, dir, nil, "resume", "last", "--headless", "--db", db)
			if code != refCode {
				t.Errorf("resume exited %d, the run that never stopped %d\n%s", code, refCode, errOut)
			}
			if got, ok, err := recordedExit(db, id); err != nil || !ok || got != code {
				t.Errorf("after the resume the ledger records exit %d (recorded %v, %v), want the %d resume returned", got, ok, err, code)
			}
			after := fleet.requests(t)
			got := exportRun(t, dir, db, id)
			if got.Run.ID != id || got.Run.Status != want.Run.Status {
				t.Errorf("resumed run %s ended %s, want %s %s", got.Run.ID, got.Run.Status, id, want.Run.Status)
			}
			for _, d := range sameCells(got, want) {
				t.Error("cell " + d)
			}
			checkSentOnce(t, was, requestsOf(t, db, id), len(want.Cells), sent(atKill, after, resumeModels...), sent(atKill, after, "judge-a"), tc.judging)

			led, err = ledger.OpenReadOnly(db)
			if err != nil {
				t.Fatal(err)
			}
			note.Reset()
			noteInterrupted(led, config, &note)
			led.Close()
			if note.Len() != 0 {
				t.Errorf("after the resume, run on its config still says %q", note.String())
			}
		})
	}
}

// requestsOf reads run id's requests from ledger db.
func requestsOf(t *testing.T, db, id string) []ledger.Request {
	t.Helper()
	led, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	reqs, err := led.Requests(id)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// sentOut reports whether request q went to a server: judge samples taken
// from the ledger or from an identical request in flight did not.
func sentOut(q ledger.Request) bool {
	return q.Server != ledger.ServerCache && q.Server != ledger.ServerShared
}

// checkSentOnce checks the requests of a resumed run (got) against the
// run's requests as the kill left them (was) and what the simulator
// received after the kill (inference: for the run's models; judge: for its
// judge's): no inference and no judge sample that completed before is
// sent again, every cell left unanswered is sent once, and the simulator
// received exactly what the ledger says was sent.
func checkSentOnce(t *testing.T, was, got []ledger.Request, cells int, inference, judge int64, judging bool) {
	t.Helper()
	var last int64
	answered := map[string]bool{} // cells whose inference completed before the kill
	judged := map[string]bool{}   // judge samples (cache keys) that completed before the kill
	for _, q := range was {
		last = max(last, q.ID)
		switch {
		case q.Status != ledger.StatusCompleted:
		case q.Purpose == ledger.PurposeInference:
			answered[cellKey(q.Model, q.Test, q.Repeat)] = true
		case q.Purpose == ledger.PurposeJudge:
			judged[q.CacheKey] = true
		}
	}
	if judging && len(answered) != cells {
		t.Fatalf("killed while judging with %d of %d cells answered: the kill came too early", len(answered), cells)
	}
	if !judging && len(answered) == cells {
		t.Fatalf("killed mid-inference with every cell answered: the kill came too late")
	}
	if judging && len(judged) == 0 {
		t.Fatalf("killed while judging with no judge sample answered: the kill came too early")
	}
	var newInference, newJudge, warmInference, warmJudge int64
	resent := map[string]int{}
	for _, q := range got {
		if q.ID <= last {
			continue
		}
		switch q.Purpose {
		case ledger.PurposeInference:
			k := cellKey(q.Model, q.Test, q.Repeat)
			if answered[k] {
				t.Errorf("inference of %s was sent again after it completed (request %d)", k, q.ID)
			}
			resent[k]++
			newInference++
		case ledger.PurposeJudge:
			if !sentOut(q) {
				continue
			}
			if judged[q.CacheKey] {
				t.Errorf("judge sample %s/%d of %s × %s was sent again after it completed (request %d)",
					q.Judge, q.Sample, q.CandidateModel, q.Test, q.ID)
			}
			newJudge++
		case ledger.PurposeWarmup:
			if q.Model == "judge-a" {
				warmJudge++
			} else {
				warmInference++
			}
		}
	}
	// Every cell's inference was queued at the start: was names them all.
	cellsSeen := map[string]bool{}
	for _, q := range was {
		if q.Purpose == ledger.PurposeInference {
			cellsSeen[cellKey(q.Model, q.Test, q.Repeat)] = true
		}
	}
	if len(cellsSeen) != cells {
		t.Errorf("%d cells have an inference request at the kill, want all %d", len(cellsSeen), cells)
	}
	for k := range cellsSeen {
		if !answered[k] && resent[k] != 1 {
			t.Errorf("cell %s, unanswered at the kill, was sent %d times after it, want once", k, resent[k])
		}
	}
	t.Logf("at the kill: %d of %d cells answered, %d judge samples; after: %d inference, %d judge, %d+%d warm-ups sent; the simulator got %d + %d",
		len(answered), cells, len(judged), newInference, newJudge, warmInference, warmJudge, inference, judge)
	if judging && newInference != 0 {
		t.Errorf("%d inference requests after a kill during judging, want none", newInference)
	}
	if inference != newInference+warmInference {
		t.Errorf("the simulator received %d requests for the run's models after the kill; the ledger says %d inference and %d warm-ups were sent",
			inference, newInference, warmInference)
	}
	if judge != newJudge+warmJudge {
		t.Errorf("the simulator received %d judge requests after the kill; the ledger says %d judge and %d warm-ups were sent",
			judge, newJudge, warmJudge)
	}
}

func TestContinuingARunALiveProcessHoldsIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, config := resumeFleet(t, dir, "")
	db := filepath.Join(dir, ".pitwall", "ledger.db")
	cmd := exec.Command(bin, "run", config, "--headless")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "[1/") {
	}
	go func() {
		for lines.Scan() {
		}
	}()
	pid := fmt.Sprintf("pid %d", cmd.Process.Pid)
	for _, args := range [][]string{
		{"resume", "last"},
		{"retry", "last", "--errors"},
		{"rejudge", "last"},
	} {
		code, _, msg := pitwall(t, dir, nil, append(args, "--headless", "--db", db)...)
		if code != 2 || !strings.Contains(msg, "running") && !strings.Contains(msg, "live process") {
			t.Errorf("%s of a run in progress: exit %d, %q; want 2 and a message that says it is running", args[0], code, msg)
		}
		if args[0] != "rejudge" && !strings.Contains(msg, pid) {
			t.Errorf("%s: the message does not name the process that runs it (%s): %q", args[0], pid, msg)
		}
	}
}

// recordedExit is the exit code the ledger at db records for run id.
func recordedExit(db, id string) (int, bool, error) {
	led, err := ledger.Open(db)
	if err != nil {
		return 0, false, err
	}
	defer led.Close()
	r, err := led.Run(id)
	if err != nil || r.ExitCode == nil {
		return 0, false, err
	}
	return *r.ExitCode, true, nil
}
