package telemetry

import (
	"context"
	"strings"
	"time"
)

// watchNvidia keeps nvidia-smi running in its loop mode and stores every
// line it prints, until ctx ends. A child that exits on its own (a driver
// reload, "NVIDIA-SMI has failed ...") is started again after a pause.
func (t *Watcher) watchNvidia(ctx context.Context, path string, interval time.Duration) {
	ms := max(interval.Milliseconds(), 1)
	backoff := restartBackoff{base: interval}
	for ctx.Err() == nil {
		read := 0
		warned := false
		out := &lineWriter{fn: func(line string) {
			if strings.TrimSpace(line) == "" {
				return
			}
			st, err := ParseNvidiaSMI(line)
			if err != nil {
				// One warning per run is enough to explain a format change;
				// the rest would flood the log every tick.
				if !warned {
					t.log.Warn("unreadable nvidia-smi output", "err", err)
					warned = true
				} else {
					t.log.Debug("unreadable nvidia-smi output", "err", err)
				}
				return
			}
			read++
			t.store(st)
		}}
		stderr := &tailBuffer{}
		cmd := telemetryCommand(ctx, path, nvidiaArgs(ms)...)
		cmd.Stdout = out
		cmd.Stderr = stderr
		err := t.runChild(cmd)
		if ctx.Err() != nil {
			return
		}
		if read > 0 {
			backoff.reset()
		}
		pause := backoff.next()
		t.log.Warn("nvidia-smi exited; starting it again",
			"err", err, "stderr", stderr.String(), "lines", read, "after", pause)
		if !telemetrySleep(ctx, pause) {
			return
		}
	}
}
