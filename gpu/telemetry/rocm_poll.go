package telemetry

import (
	"context"
	"time"
)

// pollRocm runs rocm-smi once per interval, since it has no loop mode of its
// own, and stores what it reports, until ctx ends. Failures are logged once
// until a reading succeeds again, and slow the polling down.
func (t *Watcher) pollRocm(ctx context.Context, path string, interval time.Duration) {
	backoff := restartBackoff{base: interval}
	failing := false
	for ctx.Err() == nil {
		stdout := &tailBuffer{}
		stdout.max = 4 << 20
		stderr := &tailBuffer{}
		cmd := telemetryCommand(ctx, path, rocmArgs...)
		cmd.Stdout = stdout
		cmd.Stderr = stderr
		err := t.runChild(cmd)
		if ctx.Err() != nil {
			return
		}
		var gpus []GPUState
		if err == nil {
			gpus, err = ParseRocmSMI(stdout.bytes())
		}
		pause := interval
		if err != nil {
			pause = backoff.next()
			if !failing {
				t.log.Warn("rocm-smi gave no reading", "err", err, "stderr", stderr.String())
			}
			failing = true
		} else {
			backoff.reset()
			failing = false
			t.store(gpus...)
		}
		if !telemetrySleep(ctx, pause) {
			return
		}
	}
}
