package ledger

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownerChildEnv, when set to a ledger path, makes this test binary a
// process running a run, which TestAKilledRunReadsInterrupted kills.
const ownerChildEnv = "PITWALL_LEDGER_OWNER_CHILD"

const ownedRun = "owned"

// ownerChild runs a run as the runner does (its owner, a heartbeat, rows
// in every state), prints "ready" and the heartbeat's unix ms, and waits to
// be killed.
func ownerChild(path string) int {
	// Exit when the parent goes away, so a failed parent leaves no child.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	l, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	now := time.Now()
	err = errors.Join(
		l.CreateRun(RunRow{ID: ownedRun, Status: RunRunning, StartedAt: now, Owner: l.Self(), Heartbeat: now}),
		seedRequests(l, ownedRun, now))
	beat := time.UnixMilli(time.Now().UnixMilli())
	if err == nil {
		err = l.Heartbeat(ownedRun, beat)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready", beat.UnixMilli())
	time.Sleep(time.Hour)
	return 0
}

// killOwner starts ownerChild on path, SIGKILLs it once it is ready, reaps
// it, and returns its pid and last heartbeat.
func killOwner(t *testing.T, path string) (int, time.Time) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ownerChildEnv+"="+path)
	var stderr strings.Builder
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
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var beat int64
	if _, serr := fmt.Sscanf(line, "ready %d", &beat); err != nil || serr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child said %q (%v); stderr:\n%s", line, err, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // reaped: its pid is free
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended %v, not by SIGKILL; stderr:\n%s", cmd.ProcessState, stderr.String())
	}
	return cmd.Process.Pid, time.UnixMilli(beat)
}

// reapedPID is the pid of a child that has exited and been reaped.
func reapedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestAKilledRunReadsInterruptedWithNoOpenRequests(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	pid, beat := killOwner(t, path)

	// As `pitwall runs` reads it: read-only, seconds after the kill.
	l, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if age := time.Since(beat); age >= Lease {
		t.Fatalf("the heartbeat is %s old: the dead pid was not what decided", age)
	}
	runs, err := l.Runs(0)
	if err != nil {
		t.Fatal(err)
	}
	run := findRun(t, runs, ownedRun)
	if run.Status != RunInterrupted {
		t.Fatalf("killed run reads %q, want interrupted", run.Status)
	}
	if !run.EndedAt.Equal(beat) {
		t.Errorf("ended %v, want its last heartbeat %v", run.EndedAt, beat)
	}
	for _, want := range []string{"pid " + strconv.Itoa(pid), "is gone", "pitwall resume " + ownedRun} {
		if !strings.Contains(run.Message, want) {
			t.Errorf("message %q does not say %q", run.Message, want)
		}
	}
	want := map[string]int{StatusCompleted: 2, StatusError: 1, StatusInterrupted: 3}
	if got := rawStatuses(t, l.r, ownedRun); !reflect.DeepEqual(got, want) {
		t.Errorf("stored request statuses %v, want %v", got, want)
	}
	reqs, err := l.Requests(ownedRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Status == StatusInterrupted && !r.EndedAt.Equal(beat) {
			t.Errorf("request %d interrupted at %v, want %v", r.ID, r.EndedAt, beat)
		}
		if r.Status == StatusCompleted && r.Output == "" {
			t.Errorf("completed request %d lost its output", r.ID)
		}
	}

	// Read again, by a reader and by a writer: the same, nothing rewritten.
	again, err := l.Run(ownedRun)
	if err != nil || !reflect.DeepEqual(again, run) {
		t.Errorf("second read:\n got %+v, %v\nwant %+v", again, err, run)
	}
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, err := w.Run("last"); err != nil || !reflect.DeepEqual(got, run) {
		t.Errorf("writer's read:\n got %+v, %v\nwant %+v", got, err, run)
	}
	if open, err := w.OpenRequests(ownedRun); err != nil || len(open) != 0 {
		t.Errorf("OpenRequests = %v, %v; want none", open, err)
	}
}
