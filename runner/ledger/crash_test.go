package ledger

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv, when set to a ledger path, makes this test binary the
// writer that TestCompletedRequestsSurviveSIGKILL kills (see TestMain).
const crashChildEnv = "PITWALL_LEDGER_CRASH_CHILD"

const crashRun = "crash"

// crashQueuedEnv, set, makes the child write each request's end and its
// cell with the queued calls, and report a request once its end's Ack has
// heard the commit.
const crashQueuedEnv = "PITWALL_LEDGER_CRASH_QUEUED"

// outputFor is the output a test stores for request id: about size bytes
// that a reader can check without having seen the write.
func outputFor(id int64, size int) string {
	unit := "out-" + strconv.FormatInt(id, 10) + ";"
	return strings.Repeat(unit, max(1, size/len(unit)))
}

// crashChild writes requests until it is killed, printing the id of each
// request once FinishRequest has returned it as completed. Outputs are a few
// KiB so that the WAL crosses its checkpoint threshold while the child runs
// and a kill can land during a checkpoint too.
func crashChild(path string) int {
	// Exit when the parent goes away (its end of stdin closes), so a failed
	// parent never leaves this loop running.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	l, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := l.Run(crashRun); err != nil {
		if err := l.CreateRun(RunRow{ID: crashRun, StartedAt: time.Now()}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	input := strings.Repeat("prompt ", 150)
	if os.Getenv(crashQueuedEnv) != "" {
		return crashChildQueued(l, input)
	}
	for i := 0; i < 1_000_000; i++ {
		r := Request{RunID: crashRun, Purpose: PurposeInference, Model: "m", Test: strconv.Itoa(i), Input: input}
		if _, err := l.InsertRequest(&r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := l.StartRequest(r.ID, "gpu0", time.Now()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		switch i % 3 {
		case 0: // left running
			continue
		case 1:
			r.Status, r.ErrorClass, r.Error = StatusError, "timeout", "deadline"
		case 2:
			r.Status, r.Output = StatusCompleted, outputFor(r.ID, 4096)
		}
		if err := l.FinishRequest(&r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := l.PutCell(CellRow{RunID: crashRun, Model: "m", Test: r.Test, Status: r.Status, Output: r.Output}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if r.Status == StatusCompleted {
			// os.Stdout is unbuffered: the line is in the pipe once this returns.
			fmt.Println(r.ID)
		}
	}
	return 0
}

// crashChildQueued writes as the engine does: a block of requests inserted
// in one commit, then their starts, ends and cells queued, each completed
// request reported once its end's Ack has heard the commit. The next block
// waits for nothing but its own insert, so a kill can land while ends are
// queued and not yet acknowledged.
func crashChildQueued(l *Ledger, input string) int {
	const block = 50
	for i := 0; i < 1_000_000; i += block {
		rs := make([]*Request, block)
		for k := range rs {
			rs[k] = &Request{RunID: crashRun, Purpose: PurposeInference, Model: "m", Test: strconv.Itoa(i + k), Input: input}
		}
		if err := l.InsertRequests(rs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for k, r := range rs {
			l.QueueStart(r.ID, "gpu0", time.Now(), nil)
			switch k % 3 {
			case 0: // left running
				continue
			case 1:
				r.Status, r.ErrorClass, r.Error = StatusError, "timeout", "deadline"
			case 2:
				r.Status, r.Output = StatusCompleted, outputFor(r.ID, 4096)
			}
			id, completed := r.ID, r.Status == StatusCompleted
			l.QueueFinish(r, func(err error) {
				switch {
				case err != nil:
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				case completed:
					fmt.Println(id) // acknowledged: committed
				}
			})
			l.QueueCell(CellRow{RunID: crashRun, Model: "m", Test: r.Test, Status: r.Status, Output: r.Output}, nil)
		}
	}
	return 0
}

// runAndKill starts a child writer on path, kills it with SIGKILL once it
// has reported killAfter completed requests, and returns every id it
// reported. Only whole lines count: a line cut by the kill was never
// reported.
func runAndKill(t *testing.T, path string, killAfter int, env ...string) []int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), crashChildEnv+"="+path), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var done []int64
	rd := bufio.NewReader(stdout)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break // EOF once the child is dead; a partial line is dropped
		}
		id, perr := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if perr != nil {
			t.Fatalf("child printed %q", line)
		}
		done = append(done, id)
		if len(done) == killAfter {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed by SIGKILL (%v) after %d completed; stderr:\n%s", err, len(done), stderr.String())
	}
	return done
}

// checkCrashed checks that l passes integrity_check and holds every
// reported request as completed with its output.
func checkCrashed(t *testing.T, l *Ledger, reported map[int64]bool, at string) {
	t.Helper()
	var check string
	if l.d.pg {
		check = "ok" // the server's to keep whole
	} else if err := l.r.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("%s: integrity_check = %q, %v", at, check, err)
		return
	}
	reqs, err := l.Requests(crashRun)
	if err != nil {
		t.Errorf("%s: %v", at, err)
		return
	}
	byID := make(map[int64]Request, len(reqs))
	for _, r := range reqs {
		byID[r.ID] = r
	}
	for id := range reported {
		r, ok := byID[id]
		switch {
		case !ok:
			t.Errorf("%s: request %d was reported completed and is gone", at, id)
		case r.Status != StatusCompleted || r.Output != outputFor(id, 4096):
			t.Errorf("%s: request %d was reported completed and reads %s with %d bytes of output",
				at, id, r.Status, len(r.Output))
		}
	}
}

func TestCompletedRequestsSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	t.Run("each write committed before it returns", func(t *testing.T) { testSurvivesSIGKILL(t) })
	t.Run("queued writes, once acknowledged", func(t *testing.T) { testSurvivesSIGKILL(t, crashQueuedEnv+"=1") })
}

func testSurvivesSIGKILL(t *testing.T, env ...string) {
	path := testPath(t)
	reported := map[int64]bool{}
	// Each round kills a writer that has opened what the previous kill left,
	// so recovery from a crashed WAL is itself crashed into.
	for round, killAfter := range []int{1, 150, 400} {
		for _, id := range runAndKill(t, path, killAfter, env...) {
			reported[id] = true
		}
		if _, err := os.Stat(path + "-wal"); err != nil && testPG == nil {
			t.Fatalf("round %d: no WAL left behind, so nothing was crashed into: %v", round, err)
		}

		// As `pitwall show` would: read-only, beside the crashed WAL, which
		// it leaves for the next writer to recover.
		l, err := OpenReadOnly(path)
		if err != nil {
			t.Fatalf("round %d: OpenReadOnly after kill: %v", round, err)
		}
		checkCrashed(t, l, reported, fmt.Sprintf("round %d, read-only", round))
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
	}

	// As `pitwall resume` would: recover, check, and leave nothing of the
	// crashed run in flight.
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkCrashed(t, l, reported, "writer")
	n, err := l.CancelOpen(crashRun, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("the killed writers left no request running")
	}
	reqs, err := l.Requests(crashRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Status == StatusQueued || r.Status == StatusRunning {
			t.Errorf("request %d still %s after CancelOpen", r.ID, r.Status)
		}
	}
}
