package ledger

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// HeartbeatEvery is how often the process running a run calls Heartbeat.
// The staleness limits below are multiples of it.
const HeartbeatEvery = 2 * time.Second

const (
	// staleSameHost: a run on this host whose pid is alive but whose
	// heartbeat is older than this belongs to a process that died and whose
	// pid was reused. Five beats, so a slow write or a GC pause is not death.
	staleSameHost = 5 * HeartbeatEvery
	// staleOtherHost: the pid of another host's process cannot be checked,
	// so only silence counts; long enough to absorb some clock skew.
	staleOtherHost = 30 * time.Second
	// staleNoOwner: runs left running by a pitwall older than heartbeats
	// have only their request rows as signs of life, and one long request
	// can be silent for minutes.
	staleNoOwner = 10 * time.Minute
)

// Owner is the process running a run: its pid and the host it runs on.
type Owner struct {
	PID  int
	Host string
}

func (o Owner) String() string {
	if o == (Owner{}) {
		return "a pitwall that kept no heartbeat"
	}
	return fmt.Sprintf("pid %d on %s", o.PID, o.Host)
}

// self is this process as an Owner.
func self() Owner {
	host, _ := os.Hostname() // "" if unknown: then only other "" hosts count as this one
	return Owner{PID: os.Getpid(), Host: host}
}

// Self is the owner this ledger writes into a run it creates or resumes:
// this process. Give it as RunRow.Owner to CreateRun, with a Heartbeat.
func (l *Ledger) Self() Owner { return l.self }

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
//  4. Same host: gone when its pid is not alive, or when its heartbeat is
//     older than staleSameHost (the pid now belongs to another process).
//  5. Another host: gone when its heartbeat is older than staleOtherHost.
//
// A heartbeat in the future (a clock ahead of ours) is fresh. No I/O but
// alive, which tests replace.
func goneWhy(r RunRow, activity time.Time, me Owner, held bool, now time.Time, alive func(int) bool) string {
	if r.Status != RunRunning || r.Heartbeat.IsZero() || held {
		return ""
	}
	age := func(t time.Time) time.Duration { return now.Sub(t).Truncate(time.Second) }
	switch {
	case r.Owner == (Owner{}):
		last := r.Heartbeat
		if activity.After(last) {
			last = activity
		}
		if age(last) > staleNoOwner {
			return fmt.Sprintf("%s wrote nothing for %s", r.Owner, age(last))
		}
	case r.Owner.Host == me.Host:
		if r.Owner.PID <= 0 || !alive(r.Owner.PID) {
			return fmt.Sprintf("its process (%s) is gone", r.Owner)
		}
		if age(r.Heartbeat) > staleSameHost {
			return fmt.Sprintf("its process (%s) sent no heartbeat for %s, and that pid is now another process's", r.Owner, age(r.Heartbeat))
		}
	default:
		if age(r.Heartbeat) > staleOtherHost {
			return fmt.Sprintf("its process (%s) sent no heartbeat for %s", r.Owner, age(r.Heartbeat))
		}
	}
	return ""
}

// held is the set of runs this process is running, by ledger and run id:
// CreateRun and ResumeRun with the ledger's own owner add one, FinishRun
// removes it. It spans Ledger values, since the runner writes through one
// and `show` in the same process may read through another.
var held = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

func (l *Ledger) heldKey(id string) string { return l.abs + "\x00" + id }

func (l *Ledger) hold(id string) {
	held.Lock()
	held.m[l.heldKey(id)] = true
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
	return held.m[l.heldKey(r.ID)]
}
