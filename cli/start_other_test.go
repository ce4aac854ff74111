//go:build !unix

package cli

import (
	"os/exec"
	"testing"
)

// startServer starts a child that serves until the test stops it.
func startServer(tb testing.TB, cmd *exec.Cmd) error { return cmd.Start() }
