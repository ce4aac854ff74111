package ledger

import (
	"strings"
	"testing"
	"time"
)

func TestGoneWhyFollowsItsRules(t *testing.T) {
	now := ms("2026-11-23T12:00:00Z")
	me := Owner{PID: 100, Host: "here"}
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	alive := func(pid int) bool { return pid == 100 || pid == 200 }
	tests := []struct {
		name     string
		run      RunRow
		activity time.Time
		held     bool
		want     string // "" alive; else a word the reason must hold
	}{
		{"finished runs are never gone", RunRow{Status: "completed", Owner: Owner{300, "here"}, Heartbeat: ago(time.Hour)}, time.Time{}, false, ""},
		{"already interrupted", RunRow{Status: RunInterrupted, Owner: Owner{300, "here"}, Heartbeat: ago(time.Hour)}, time.Time{}, false, ""},
		{"no heartbeat: nothing to judge by", RunRow{Status: RunRunning, Owner: Owner{300, "here"}}, time.Time{}, false, ""},
		{"held by this process, however late", RunRow{Status: RunRunning, Owner: me, Heartbeat: ago(time.Hour)}, time.Time{}, true, ""},

		{"same host, pid gone, fresh heartbeat", RunRow{Status: RunRunning, Owner: Owner{300, "here"}, Heartbeat: ago(time.Second)}, time.Time{}, false, "is gone"},
		{"same host, pid alive, fresh", RunRow{Status: RunRunning, Owner: Owner{200, "here"}, Heartbeat: ago(staleSameHost)}, time.Time{}, false, ""},
		{"same host, pid alive, stale: reused pid", RunRow{Status: RunRunning, Owner: Owner{200, "here"}, Heartbeat: ago(staleSameHost + time.Second)}, time.Time{}, false, "another process"},
		{"our own pid, not held: a former process", RunRow{Status: RunRunning, Owner: me, Heartbeat: ago(time.Minute)}, time.Time{}, false, "no heartbeat for 1m0s"},
		{"same host, pid 0 with a host", RunRow{Status: RunRunning, Owner: Owner{0, "here"}, Heartbeat: ago(time.Second)}, time.Time{}, false, "is gone"},

		{"other host, fresh", RunRow{Status: RunRunning, Owner: Owner{300, "there"}, Heartbeat: ago(staleOtherHost)}, time.Time{}, false, ""},
		{"other host, stale", RunRow{Status: RunRunning, Owner: Owner{300, "there"}, Heartbeat: ago(staleOtherHost + time.Second)}, time.Time{}, false, "(pid 300 on there) sent no heartbeat for 31s"},
		{"other host, clock ahead", RunRow{Status: RunRunning, Owner: Owner{300, "there"}, Heartbeat: now.Add(time.Hour)}, time.Time{}, false, ""},
		{"other host, its pid is alive here: irrelevant", RunRow{Status: RunRunning, Owner: Owner{200, "there"}, Heartbeat: ago(time.Hour)}, time.Time{}, false, "no heartbeat"},

		{"no owner, quiet past the limit", RunRow{Status: RunRunning, Heartbeat: ago(staleNoOwner + time.Second)}, time.Time{}, false, "wrote nothing for 10m1s"},
		{"no owner, a recent request", RunRow{Status: RunRunning, Heartbeat: ago(time.Hour)}, ago(staleNoOwner), false, ""},
		{"no owner, only old requests", RunRow{Status: RunRunning, Heartbeat: ago(time.Hour)}, ago(2 * staleNoOwner), false, "wrote nothing for 20m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := goneWhy(tt.run, tt.activity, me, tt.held, now, alive)
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
