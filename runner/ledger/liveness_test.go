package ledger

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// procStartKnown: this system tells when a process started (Linux's /proc).
var _, _, procStartKnown = procStart(os.Getpid())

// parentStart is the recorded start of this test's parent, a process that
// lives as long as the test.
func parentStart(t *testing.T) string {
	t.Helper()
	start, _, _ := procStart(os.Getppid())
	return start
}

func TestGoneWhyFollowsItsRules(t *testing.T) {
	t.Parallel()
	now := ms("2026-11-23T12:00:00Z")
	me := Owner{PID: 100, Host: "here", Start: "boot/2"}
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	starts := map[int]string{100: "boot/2", 200: "boot/7"} // the processes alive here
	gone := func(o Owner) (string, bool) {
		start, ok := starts[o.PID]
		switch {
		case !ok:
			return "is gone", true
		case o.Start != "" && o.Start != start:
			return "is gone (its pid is now another process's)", true
		}
		return "", true
	}
	unchecked := func(Owner) (string, bool) { return "", false }
	tests := []struct {
		name     string
		run      RunRow
		activity time.Time
		held     bool
		want     string // "" alive; else a word the reason must hold
		noPIDs   bool   // pids cannot be checked here
	}{
		{"finished runs are never gone", RunRow{Status: "completed", Owner: Owner{PID: 300, Host: "here"}, Heartbeat: ago(time.Hour)}, time.Time{}, false, "", false},
		{"already interrupted", RunRow{Status: RunInterrupted, Owner: Owner{PID: 300, Host: "here"}, Heartbeat: ago(time.Hour)}, time.Time{}, false, "", false},
		{"no heartbeat: nothing to judge by", RunRow{Status: RunRunning, Owner: Owner{PID: 300, Host: "here"}}, time.Time{}, false, "", false},
		{"held by this process, however late", RunRow{Status: RunRunning, Owner: me, Heartbeat: ago(time.Hour)}, time.Time{}, true, "", false},

		{"same host, pid gone, fresh heartbeat", RunRow{Status: RunRunning, Owner: Owner{PID: 300, Host: "here"}, Heartbeat: ago(time.Second)}, time.Time{}, false, "is gone", false},
		{"same host, pid alive, fresh", RunRow{Status: RunRunning, Owner: Owner{PID: 200, Host: "here", Start: "boot/7"}, Heartbeat: ago(time.Second)}, time.Time{}, false, "", false},
		{"same host, pid alive, silent for a day: stopped, not dead", RunRow{Status: RunRunning, Owner: Owner{PID: 200, Host: "here", Start: "boot/7"}, Heartbeat: ago(24 * time.Hour)}, time.Time{}, false, "", false},
		{"same host, pid alive, no start recorded, silent for a day", RunRow{Status: RunRunning, Owner: Owner{PID: 200, Host: "here"}, Heartbeat: ago(24 * time.Hour)}, time.Time{}, false, "", false},
		{"same host, pid alive, another start: reused pid", RunRow{Status: RunRunning, Owner: Owner{PID: 200, Host: "here", Start: "boot/3"}, Heartbeat: ago(time.Second)}, time.Time{}, false, "another process", false},
		{"our own pid, another start, not held: a former process", RunRow{Status: RunRunning, Owner: Owner{PID: 100, Host: "here", Start: "oldboot/9"}, Heartbeat: ago(time.Second)}, time.Time{}, false, "another process", false},
		{"same host, pids unchecked, within the lease", RunRow{Status: RunRunning, Owner: Owner{PID: 300, Host: "here"}, Heartbeat: ago(Lease)}, time.Time{}, false, "", true},
		{"same host, pids unchecked, past the lease", RunRow{Status: RunRunning, Owner: Owner{PID: 300, Host: "here"}, Heartbeat: ago(Lease + time.Second)}, time.Time{}, false, "no heartbeat for 2m1s", true},
		{"same host, pid 0 with a host", RunRow{Status: RunRunning, Owner: Owner{PID: 0, Host: "here"}, Heartbeat: ago(time.Second)}, time.Time{}, false, "is gone", false},

		{"other host, fresh", RunRow{Status: RunRunning, Owner: Owner{PID: 300, Host: "there"}, Heartbeat: ago(Lease)}, time.Time{}, false, "", false},
		{"other host, stale", RunRow{Status: RunRunning, Owner: Owner{PID: 300, Host: "there"}, Heartbeat: ago(Lease + time.Second)}, time.Time{}, false, "(pid 300 on there) sent no heartbeat for 2m1s", false},
		{"other host, clock ahead", RunRow{Status: RunRunning, Owner: Owner{PID: 300, Host: "there"}, Heartbeat: now.Add(time.Hour)}, time.Time{}, false, "", false},
		{"other host, its pid is alive here: irrelevant", RunRow{Status: RunRunning, Owner: Owner{PID: 200, Host: "there"}, Heartbeat: ago(time.Hour)}, time.Time{}, false, "no heartbeat", false},

		{"no owner, quiet past the limit", RunRow{Status: RunRunning, Heartbeat: ago(staleNoOwner + time.Second)}, time.Time{}, false, "wrote nothing for 10m1s", false},
		{"no owner, a recent request", RunRow{Status: RunRunning, Heartbeat: ago(time.Hour)}, ago(staleNoOwner), false, "", false},
		{"no owner, only old requests", RunRow{Status: RunRunning, Heartbeat: ago(time.Hour)}, ago(2 * staleNoOwner), false, "wrote nothing for 20m0s", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := gone
			if tt.noPIDs {
				check = unchecked
			}
			got := goneWhy(tt.run, tt.activity, me, tt.held, now, check)
			switch {
			case tt.want == "" && got != "":
				t.Errorf("gone (%q), want alive", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("goneWhy = %q, want a reason holding %q", got, tt.want)
			}
		})
	}
}

func TestPidAliveTellsThisProcessFromAReapedOne(t *testing.T) {
	t.Parallel()
	if !pidAlive(self().PID) {
		t.Error("this process reads as dead")
	}
	if pidAlive(0) || pidAlive(-1) {
		t.Error("pid 0 or -1 reads as alive: kill(0) would signal our own process group")
	}
	pid := reapedPID(t)
	if pidAlive(pid) {
		t.Errorf("pid %d of a reaped child reads as alive", pid)
	}
}

func TestProcStartTellsAProcessFromAnotherWithItsPid(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("process start times are read from Linux's /proc")
	}
	me, zombie, ok := procStart(os.Getpid())
	if !ok || zombie || !strings.Contains(me, "/") {
		t.Fatalf("procStart(self) = %q, %v, %v", me, zombie, ok)
	}
	if again, _, _ := procStart(os.Getpid()); again != me {
		t.Errorf("this process's start read twice: %q then %q", me, again)
	}
	if self().Start != me {
		t.Errorf("self().Start = %q, want %q", self().Start, me)
	}
	// A child that exited and was not reaped yet: its pid is alive to
	// kill(0), and it is gone. It is a shell, not this test binary, whose
	// TestMain would run the PostgreSQL pass before it exits.
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	child, _, ok := procStart(pid)
	if !ok || child == me {
		t.Errorf("the child's start %q (%v) is not its own (this process: %q)", child, ok, me)
	}
	// It exits at once; until cmd.Wait reaps it, it is a zombie.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, zombie, _ := procStart(pid); zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never exited")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !pidAlive(pid) {
		t.Fatal("kill(0) says the zombie is gone: the start time is not what decides")
	}
	if why, checked := processGone(Owner{PID: pid, Host: "h", Start: child}); !checked || !strings.Contains(why, "gone") {
		t.Errorf("an exited child not yet reaped reads %q, %v; want gone", why, checked)
	}
	_ = cmd.Wait()
	if why, _ := processGone(Owner{PID: os.Getpid(), Host: "h", Start: me}); why != "" {
		t.Errorf("this process reads gone: %q", why)
	}
	if why, _ := processGone(Owner{PID: os.Getpid(), Host: "h", Start: "another-boot/1"}); !strings.Contains(why, "another process") {
		t.Errorf("this pid recorded with another start reads %q; want another process's", why)
	}
}
