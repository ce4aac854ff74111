package ledger

import (
	"fmt"
	"os"
	"os/user"
	"sync"
	"time"
)

// HeartbeatEvery is how often the process running a run calls Heartbeat.
const HeartbeatEvery = 2 * time.Second

// Lease is how long the owner of a run on another host (or on a system
// where pids cannot be checked) may be silent before a reader closes its
// run as interrupted and another process may resume it. Generous, since
// silence is not death there: a laptop asleep, a process stopped by
// ctrl+z or a debugger, a GC pause on a loaded box, clocks apart. An owner
// that wakes after its run was taken over finds its writes refused
// (fencing, fence.go) and stops without changing anything.
const Lease = 2 * time.Minute

// staleNoOwner: runs left running by a pitwall older than heartbeats have
// only their request rows as signs of life, and one long request can be
// silent for minutes.
const staleNoOwner = 10 * time.Minute

// Owner is the process running a run: its pid, the host it runs on, and
// when that process started (Start: the boot and the start time in clock
// ticks since boot, as Linux's /proc tells them; "" where unknown), so that
// a pid reused by another process is not taken for the owner. User is
// the user it runs as ("" where unknown, and for runs of earlier builds):
// told, never checked.
type Owner struct {
	PID   int
	Host  string
	Start string
	User  string
}

func (o Owner) String() string {
	if o.PID == 0 && o.Host == "" {
		return "a pitwall that kept no heartbeat"
	}
	return fmt.Sprintf("pid %d on %s", o.PID, o.Host)
}

// none says whether o names no process at all (a run of a pitwall older
// than heartbeats).
func (o Owner) none() bool { return o.PID == 0 && o.Host == "" }

// self is this process as an Owner.
func self() Owner {
	host, _ := os.Hostname() // "" if unknown: then only other "" hosts count as this one
	pid := os.Getpid()
	start, _, _ := procStart(pid)
	return Owner{PID: pid, Host: host, Start: start, User: userName()}
}

// userName is the user this process runs as: its account's name, or
// $USER (or $LOGNAME) where the account is not in the system's list.
func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return os.Getenv("LOGNAME")
}

// Self is the owner this ledger writes into a run it creates or resumes:
// this process. Give it as RunRow.Owner to CreateRun, with a Heartbeat.
func (l *Ledger) Self() Owner { return l.self }

// processGone says whether the process o names, on this host, is gone, and
// why ("" when it lives). checked is false where pids cannot be looked at
// (no signals): then the lease decides, as for another host. A process
// alive is alive however long it has been stopped or silent; one whose pid
// lives but whose start differs from the one recorded is another process
// that got the pid; a zombie (exited, not yet reaped) is gone.
func processGone(o Owner) (why string, checked bool) {
	if !canSignal {
		return "", false
	}
	if o.PID <= 0 || !pidAlive(o.PID) {
		return "is gone", true
	}
	if o.Start == "" {
		return "", true // nothing recorded to compare: a live pid is alive
	}
	start, zombie, ok := procStart(o.PID)
	switch {
	case !ok:
		return "", true
	case zombie:
		return "is gone (it exited and was not reaped)", true
	case start != o.Start:
		return "is gone (its pid is now another process's)", true
	}
	return "", true
}

// goneWhy decides whether a run's process is gone, and says why ("" when it
// may be alive). Rules, in order:
//
//  1. Only a running run with a heartbeat can be gone: a run without one was
//     made by a caller that keeps none, and nothing proves it dead.
//  2. A run this process holds (created or resumed here, not finished) is
//     alive: a late heartbeat of our own is not our death.
//  3. No owner (pid 0, no host: left running by a pitwall older than
//     heartbeats): gone when its last sign of life (the heartbeat the
//     migration gave it, or a later request row: activity) is older than
//     staleNoOwner.
//  4. Same host, where pids can be checked: gone only when its process is
//     (processGone): not when it is silent, since a stopped or suspended
//     process is silent and alive.
//  5. Another host (or pids that cannot be checked): gone when its
//     heartbeat is older than Lease.
//
// A heartbeat in the future (a clock ahead of ours) is fresh. No I/O but
// gone, which tests replace.
func goneWhy(r RunRow, activity time.Time, me Owner, held bool, now time.Time, gone func(Owner) (string, bool)) string {
	if r.Status != RunRunning || r.Heartbeat.IsZero() || held {
		return ""
	}
	age := func(t time.Time) time.Duration { return now.Sub(t).Truncate(time.Second) }
	if r.Owner.none() {
		last := r.Heartbeat
		if activity.After(last) {
			last = activity
		}
		if age(last) > staleNoOwner {
			return fmt.Sprintf("%s wrote nothing for %s", r.Owner, age(last))
		}
		return ""
	}
	if r.Owner.Host == me.Host {
		if why, checked := gone(r.Owner); checked {
			if why != "" {
				return fmt.Sprintf("its process (%s) %s", r.Owner, why)
			}
			return ""
		}
	}
	if age(r.Heartbeat) > Lease {
		return fmt.Sprintf("its process (%s) sent no heartbeat for %s", r.Owner, age(r.Heartbeat))
	}
	return ""
}

// held is the set of runs this process is running, by ledger and run id,
// with the generation it holds each at (its fencing token, fence.go):
// CreateRun and ResumeRun with the ledger's own owner add one, FinishRun
// removes it. It spans Ledger values, since the runner writes through one
// and `show` in the same process may read through another.
var held = struct {
	sync.Mutex
	m map[string]heldRun
}{m: map[string]heldRun{}}

type heldRun struct {
	ledger, id string
	gen        int64
}

func (l *Ledger) heldKey(id string) string { return l.abs + "\x00" + id }

func (l *Ledger) hold(id string, gen int64) {
	held.Lock()
	held.m[l.heldKey(id)] = heldRun{l.abs, id, gen}
	held.Unlock()
}

func (l *Ledger) release(id string) {
	held.Lock()
	delete(held.m, l.heldKey(id))
	held.Unlock()
}

func (l *Ledger) holds(r RunRow) bool {
	if r.Owner != l.self {
		return false
	}
	held.Lock()
	defer held.Unlock()
	h, ok := held.m[l.heldKey(r.ID)]
	return ok && h.gen == r.Generation
}

// heldHere lists the runs of this ledger this process holds.
func (l *Ledger) heldHere() []heldRun {
	held.Lock()
	defer held.Unlock()
	var out []heldRun
	for _, h := range held.m {
		if h.ledger == l.abs {
			out = append(out, h)
		}
	}
	return out
}
