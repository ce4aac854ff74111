//go:build unix

package reap

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// held keeps every watchdog's pipe open until this process ends: the
// kernel closes them then, and only then, whatever way it ends.
var (
	mu   sync.Mutex
	held = map[*os.File]bool{}
)

// The watchdog reads one line: "done" releases it; end of file (this
// process gone) kills the group (when there is one) and removes the folders.
const script = `IFS= read -r line
[ "$line" = done ] && exit 0
[ "$1" -gt 0 ] && kill -s KILL -- "-$1" 2>/dev/null
shift
[ $# -gt 0 ] && rm -rf -- "$@"
exit 0`

// Group arranges for process group pgid to be killed (SIGKILL) and for
// dirs to be removed when this process ends without calling the returned
// release. A pgid of 0 watches only the folders. Start the group's leader
// with SysProcAttr.Setpgid so that its pid is the group's id.
func Group(pgid int, dirs ...string) (release func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("reap: %w", err)
	}
	defer r.Close()
	args := append([]string{"-c", script, "reap", strconv.Itoa(pgid)}, dirs...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Stdin = r
	// Its own group, so that killing the test's group (or the one it
	// watches) leaves it standing to do its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("reap: start the watchdog: %w", err)
	}
	go cmd.Wait() // reap the shell when it ends
	mu.Lock()
	held[w] = true
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			delete(held, w)
			mu.Unlock()
			_, _ = w.WriteString("done\n")
			w.Close()
		})
	}, nil
}
