//go:build unix

package cli

import (
	"os/exec"
	"syscall"
	"testing"

	"pitwall/internal/reap"
)

// startServer starts a child that serves until the test stops it (a
// `pitwall sim`), in a process group of its own handed to the watchdog:
// if this test binary dies before its cleanups run, the child dies too.
func startServer(tb testing.TB, cmd *exec.Cmd) error {
	tb.Helper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return err
	}
	release, err := reap.Group(cmd.Process.Pid)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	tb.Cleanup(release) // runs after the test's own cleanups have stopped it
	return nil
}
