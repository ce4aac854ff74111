package telemetry

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// childWaitDelay bounds how long a telemetry child may take to go after
// SIGTERM, and how long a grandchild holding its output open may delay Wait,
// before both are cut off.
const childWaitDelay = 3 * time.Second

// telemetryCommand builds a child that is asked to stop with SIGTERM when
// ctx ends (nvidia-smi flushes and exits cleanly on it) and killed if it has
// not gone within childWaitDelay.
func telemetryCommand(ctx context.Context, path string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = childWaitDelay
	return cmd
}

// runChild runs cmd to the end, recording its pid while it lives so that
// tests can check it was reaped.
func (t *Watcher) runChild(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	t.mu.Lock()
	t.pid = cmd.Process.Pid
	t.starts++
	t.mu.Unlock()
	err := cmd.Wait()
	t.mu.Lock()
	t.pid = 0
	t.mu.Unlock()
	return err
}

// lineWriter hands each complete line written to it to fn. exec copies a
// child's output into it from a goroutine that Wait waits for, so no reader
// of ours outlives the child.
type lineWriter struct {
	fn  func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	// A child that never ends a line must not grow the buffer forever.
	if len(w.buf) > 64<<10 {
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// tailBuffer keeps the last max bytes (default 1 KiB) a child wrote: enough
// of stderr to say why it failed, and a bound on what a runaway child can
// make us hold.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.max
	if limit <= 0 {
		limit = 1 << 10
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - limit; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *tailBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf
}

func (b *tailBuffer) String() string { return strings.TrimSpace(string(b.bytes())) }

// restartBackoff is the pause before starting a failed child again: it
// doubles from the reading interval up to a ceiling, so a broken driver
// costs one failed start every half minute, not one per tick.
type restartBackoff struct {
	base, cur time.Duration
}

const maxRestartBackoff = 30 * time.Second

func (b *restartBackoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.base
	} else {
		b.cur = min(2*b.cur, maxRestartBackoff)
	}
	return b.cur
}

func (b *restartBackoff) reset() { b.cur = 0 }
