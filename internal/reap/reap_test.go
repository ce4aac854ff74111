//go:build unix

package reap

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childEnv = "PITWALL_REAP_CHILD"

func TestMain(m *testing.M) {
	// The child: it starts a sleeping group and a folder, hands both to
	// Group, says what they are and waits to be killed (or releases and
	// exits, when asked).
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	sleeper := exec.Command("sleep", "300")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		fmt.Println("error", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "reap-test-")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	release, err := Group(sleeper.Process.Pid, dir)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(sleeper.Process.Pid, dir)
	if mode == "release" {
		release()
		return 0
	}
	time.Sleep(time.Hour)
	return 0
}

// startChild runs this binary as the child and reads the group and folder it made.
func startChild(t *testing.T, mode string) (*exec.Cmd, int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("child said nothing: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 || f[0] == "error" {
		cmd.Process.Kill()
		t.Fatalf("child: %q", line)
	}
	pgid, _ := strconv.Atoi(f[0])
	return cmd, pgid, f[1]
}

func alive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

func TestAKilledProcessLeavesNoGroupOrFolderBehind(t *testing.T) {
	cmd, pgid, dir := startChild(t, "wait")
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL); os.RemoveAll(dir) })
	if !alive(pgid) {
		t.Fatal("the child's group is not running")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for alive(pgid) || exists(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("30s after a SIGKILL: group %d alive %v, %s there %v", pgid, alive(pgid), dir, exists(dir))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAReleasedWatchdogTouchesNothing(t *testing.T) {
	cmd, pgid, dir := startChild(t, "release")
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL); os.RemoveAll(dir) })
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// The watchdog has read "done" and exited; give a wrong one time to act.
	time.Sleep(500 * time.Millisecond)
	if !alive(pgid) || !exists(dir) {
		t.Errorf("after release: group %d alive %v, %s there %v; want both kept", pgid, alive(pgid), dir, exists(dir))
	}
}

func exists(p string) bool {
	_, err := os.Stat(filepath.Clean(p))
	return err == nil
}

func TestAStepEndsAMinuteBeforeTheTestsDeadline(t *testing.T) {
	ctx, cancel := Step(t, 24*time.Hour)
	defer cancel()
	end, ok := ctx.Deadline()
	if !ok {
		t.Fatal("a step has no deadline")
	}
	if d, has := t.Deadline(); has {
		if !end.Before(d.Add(-59 * time.Second)) {
			t.Errorf("the step ends at %v, the test at %v: want a minute before", end, d)
		}
	} else if time.Until(end) < 23*time.Hour {
		t.Errorf("without a test deadline the step ends in %v, want the 24h asked for", time.Until(end))
	}
	short, cancel2 := Step(t, time.Second)
	defer cancel2()
	if e, _ := short.Deadline(); time.Until(e) > 2*time.Second {
		t.Errorf("a step of 1s ends in %v", time.Until(e))
	}
}
