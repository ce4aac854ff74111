//go:build unix

package telemetry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeSMI is a stand-in for nvidia-smi or rocm-smi written to a temporary
// directory: it records its arguments, prints a fixture, and (in loop mode)
// honours -lms and notes a SIGTERM before leaving.
type fakeSMI struct {
	path, args, term string
}

// The loop script sleeps in the background and waits for it, so that a
// SIGTERM runs the trap at once instead of after the sleep.
const fakeLoopScript = `#!/bin/sh
printf '%s\n' "$*" >> '{{ARGS}}'
ms=500
while [ $# -gt 0 ]; do
  if [ "$1" = "-lms" ]; then ms=$2; fi
  shift
done
secs=$(awk -v ms="$ms" 'BEGIN { printf "%.3f", ms/1000 }')
sp=
trap 'if [ -n "$sp" ]; then kill "$sp" 2>/dev/null; fi; echo term > "{{TERM}}"; exit 0' TERM
while :; do
  cat '{{FIXTURE}}'
  sleep "$secs" &
  sp=$!
  wait "$sp"
done
`

// fakeOnceScript prints the fixture and exits with the given status.
const fakeOnceScript = `#!/bin/sh
printf '%s\n' "$*" >> '{{ARGS}}'
{{PRELUDE}}
cat '{{FIXTURE}}'
exit {{STATUS}}
`

func writeFakeSMI(t *testing.T, name, script, fixture string, repl ...string) fakeSMI {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	f := fakeSMI{
		path: filepath.Join(dir, name),
		args: filepath.Join(dir, "args"),
		term: filepath.Join(dir, "term"),
	}
	r := strings.NewReplacer(append([]string{
		"{{ARGS}}", f.args, "{{TERM}}", f.term, "{{FIXTURE}}", abs,
	}, repl...)...)
	if err := os.WriteFile(f.path, []byte(r.Replace(script)), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f fakeSMI) argLines(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(f.args)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

// only makes a LookPath that finds just the given programs.
func only(progs map[string]string) func(string) (string, error) {
	return func(name string) (string, error) {
		if p, ok := progs[name]; ok {
			return p, nil
		}
		return "", errors.New("not found")
	}
}

// childPID is the pid of the running child, once there is one.
func (t *Watcher) childPID() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pid
}

func (t *Watcher) childStarts() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.starts
}

// assertReaped checks that pid was waited for: a zombie still answers
// kill(pid, 0), a reaped process does not.
func assertReaped(t *testing.T, pid int) {
	t.Helper()
	if pid == 0 {
		t.Fatal("no child pid was recorded")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d still exists after Close (kill 0: %v): not reaped", pid, err)
	}
}

func TestTelemetryReadsFakeNvidiaSMIAndCloseEndsIt(t *testing.T) {
	fake := writeFakeSMI(t, "nvidia-smi", fakeLoopScript, "testdata/nvidia-smi/synthetic-h100x2.csv")
	tel := Start(t.Context(), Options{
		Interval: 20 * time.Millisecond,
		LookPath: only(map[string]string{"nvidia-smi": fake.path, "rocm-smi": "/nonexistent/rocm-smi"}),
	})
	if got := tel.Source(); got != SourceNvidiaSMI {
		t.Fatalf("Source = %q, want %q", got, SourceNvidiaSMI)
	}
	// Two ticks, so the -lms loop is known to go round.
	ticks := 0
	waitTelemetry(t, tel, func() bool { ticks++; return len(tel.GPUs()) == 2 && ticks > 3 })
	pid := tel.childPID()
	tel.Close()

	got := tel.GPUs()
	if len(got) != 2 || got[0].Index != 0 || got[1].Index != 1 {
		t.Fatalf("GPUs = %+v, want indexes 0 and 1", got)
	}
	if got[0].Name != "NVIDIA H100 80GB HBM3" || got[0].MemUsedMiB != 72790 || got[1].PowerW != 140.07 {
		t.Errorf("GPUs = %+v, not the fixture's values", got)
	}
	if got[0].At.IsZero() {
		t.Error("readings carry no time")
	}
	if args := fake.argLines(t); len(args) != 1 || args[0] != strings.Join(nvidiaArgs(20), " ") {
		t.Errorf("nvidia-smi started as %q, want once with %q", args, nvidiaArgs(20))
	}
	if _, err := os.Stat(fake.term); err != nil {
		t.Errorf("the child was not asked to stop with SIGTERM: %v", err)
	}
	assertReaped(t, pid)
	tel.Close() // a second Close is harmless
}

func TestTelemetryChildEndsWithItsContext(t *testing.T) {
	fake := writeFakeSMI(t, "nvidia-smi", fakeLoopScript, "testdata/nvidia-smi/synthetic-h100x2.csv")
	ctx, cancel := context.WithCancel(t.Context())
	tel := Start(ctx, Options{
		Interval: 20 * time.Millisecond,
		LookPath: only(map[string]string{"nvidia-smi": fake.path}),
	})
	waitTelemetry(t, tel, func() bool { return len(tel.GPUs()) == 2 })
	pid := tel.childPID()
	cancel()
	select {
	case <-tel.done:
	case <-time.After(10 * time.Second):
		t.Fatal("telemetry did not end when its context was cancelled")
	}
	assertReaped(t, pid)
}

func TestTelemetryRestartsNvidiaSMIThatExits(t *testing.T) {
	// Prints one tick and fails, like nvidia-smi losing the driver.
	fake := writeFakeSMI(t, "nvidia-smi", fakeOnceScript, "testdata/nvidia-smi/synthetic-h100x2.csv",
		"{{PRELUDE}}", "", "{{STATUS}}", "9")
	tel := Start(t.Context(), Options{
		Interval: 5 * time.Millisecond,
		LookPath: only(map[string]string{"nvidia-smi": fake.path}),
	})
	defer tel.Close()
	waitTelemetry(t, tel, func() bool { return tel.childStarts() >= 2 })
	if n := len(fake.argLines(t)); n < 2 {
		t.Errorf("nvidia-smi ran %d times, want a restart", n)
	}
}

func TestTelemetryPollsFakeRocmSMI(t *testing.T) {
	// Warnings before the JSON, as rocm-smi prints on some systems.
	fake := writeFakeSMI(t, "rocm-smi", fakeOnceScript, "testdata/rocm-smi/mi100x4-rocm602-telegraf.json",
		"{{PRELUDE}}", "echo 'WARNING: fake rocm-smi says hello'", "{{STATUS}}", "0")
	tel := Start(t.Context(), Options{
		Interval: 5 * time.Millisecond,
		LookPath: only(map[string]string{"rocm-smi": fake.path}),
	})
	if got := tel.Source(); got != SourceRocmSMI {
		t.Fatalf("Source = %q, want %q", got, SourceRocmSMI)
	}
	waitTelemetry(t, tel, func() bool { return len(tel.GPUs()) == 4 && tel.childStarts() >= 2 })
	tel.Close()

	got := tel.GPUs()
	if got[3].UUID != "0x1b9dd972253c3736" || got[3].PowerW != 39 || got[0].TempC != 53 {
		t.Errorf("GPUs = %+v, not the fixture's values", got)
	}
	want := strings.Join(rocmArgs, " ")
	for _, a := range fake.argLines(t) {
		if a != want {
			t.Fatalf("rocm-smi started as %q, want %q", a, want)
		}
	}
}

func TestTelemetryPrefersNvidiaOverRocm(t *testing.T) {
	nv := writeFakeSMI(t, "nvidia-smi", fakeLoopScript, "testdata/nvidia-smi/synthetic-h100x2.csv")
	rocm := writeFakeSMI(t, "rocm-smi", fakeOnceScript, "testdata/rocm-smi/mi100x4-rocm602-telegraf.json",
		"{{PRELUDE}}", "", "{{STATUS}}", "0")
	both := map[string]string{"nvidia-smi": nv.path, "rocm-smi": rocm.path}
	tests := []struct {
		source string
		want   string
	}{
		{"", SourceNvidiaSMI},
		{"auto", SourceNvidiaSMI},
		{"nvidia", SourceNvidiaSMI},
		{"rocm", SourceRocmSMI},
		{"none", SourceNone},
	}
	for _, tt := range tests {
		t.Run("source="+tt.source, func(t *testing.T) {
			tel := Start(t.Context(), Options{Source: tt.source, Interval: 50 * time.Millisecond, LookPath: only(both)})
			defer tel.Close()
			if got := tel.Source(); got != tt.want {
				t.Errorf("Source = %q, want %q", got, tt.want)
			}
		})
	}
}
