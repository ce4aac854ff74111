//go:build unix

package config

import (
	"path/filepath"
	"syscall"
	"testing"
)

// makeFIFO makes a named pipe that nothing writes to: opening it to read
// blocks for ever, so a loader that opens before it looks hangs the test.
func makeFIFO(t *testing.T) (string, bool) {
	p := filepath.Join(t.TempDir(), "battery.toml")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return p, true
}
