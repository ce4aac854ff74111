//go:build unix

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"pitwall/config"
)

// boundedRun runs the binary in dir under an address-space limit of 2 GB
// (so a reader that is not bounded fails here rather than taking the
// machine) and a 20 s deadline (so one that blocks fails rather than
// hangs), and returns its exit code, stderr, wall time and peak RSS.
func boundedRun(t *testing.T, dir string, args ...string) (code int, stderr string, took time.Duration, rss int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `ulimit -v 2000000; exec "$0" "$@"`, bin}, args...)...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("pitwall %s still ran after 20 s: a file read blocked", strings.Join(args, " "))
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss)
		if runtime.GOOS != "darwin" { // kilobytes everywhere but macOS
			rss <<= 10
		}
	}
	return code, errb.String(), took, rss
}

// TestEveryCommandRefusesFilesItCannotReadBoundedly is issue 17's repro:
// validate and qualify read a config's battery, and qualify its config,
// without the bounds run has (/dev/zero grew past 1.6 GB, a FIFO hung, a
// 400 KB nested TOML reached 5.8 GB). Every command that reads a file a
// user names, in every role the file can have, must refuse it at once,
// with exit 2, a message naming it, and a few MB of memory.
func TestEveryCommandRefusesFilesItCannotReadBoundedly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "pipe.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	huge := filepath.Join(dir, "huge.toml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil { // sparse: 4 GiB claimed, nothing written
		t.Fatal(err)
	}
	f.Close()
	// 400 KB nested 200,000 deep: the TOML.
	const deep = 200_000
	deepTOML := write("deep.toml", "[[tests]]\nid = \"a\"\nuser = \"hi\"\nx = "+strings.Repeat("[", deep)+strings.Repeat("]", deep)+"\n")
	deepJSON := write("deep.json", `{"tests": [{"id": "a", "user": "hi", "x": `+strings.Repeat("[", deep)+strings.Repeat("]", deep)+"}]}")
	var yml strings.Builder
	yml.WriteString("prompts:\n  - \"{{q}}\"\ntests:\n")
	for i := range 400 { // 80 KB of block mappings, 400 deep
		fmt.Fprintf(&yml, "%sk%d:\n", strings.Repeat(" ", 2+i), i)
	}
	deepYAML := write("deep.yaml", yml.String())
	deepConfig := write("deep-config.toml", simConfigFor(write("ok.toml", "[[tests]]\nid = \"a\"\nuser = \"hi\"\n"))+
		"[sim]\nx = "+strings.Repeat("[", deep)+strings.Repeat("]", deep)+"\n")
	okBattery, export := importFixture(t, dir)

	type input struct {
		name, path, want string
	}
	bad := []input{
		{"/dev/zero", "/dev/zero", "is a character device"},
		{"a FIFO with no writer", fifo, "is a named pipe (FIFO)"},
		{"a 4 GiB file", huge, "more than the 64 MiB"},
	}
	nested := fmt.Sprintf("nested more than %d levels deep", config.MaxNesting)
	type call struct {
		name  string
		args  []string
		names string // the file the message must name
		want  string
	}
	var calls []call
	for _, in := range bad {
		cfg := write(strings.NewReplacer("/", "_", " ", "_").Replace(in.name)+".pitwall.toml", simConfigFor(in.path))
		calls = append(calls,
			call{"validate " + in.name + " as the config", []string{"validate", in.path}, in.path, in.want},
			call{"run " + in.name + " as the config", []string{"run", "--headless", in.path}, in.path, in.want},
			call{"qualify " + in.name + " as the config", []string{"qualify", "--headless", in.path}, in.path, in.want},
			call{"validate " + in.name + " as the battery", []string{"validate", cfg}, in.path, in.want},
			call{"run " + in.name + " as the battery", []string{"run", "--headless", cfg}, in.path, in.want},
			call{"qualify " + in.name + " as the battery", []string{"qualify", "--headless", cfg}, in.path, in.want},
			call{"import " + in.name + " as the results", []string{"import", in.path, "--battery", okBattery}, in.path, in.want},
			call{"import " + in.name + " as the battery", []string{"import", export, "--battery", in.path}, in.path, in.want},
		)
	}
	for _, b := range []string{deepTOML, deepJSON, deepYAML} {
		cfg := write(filepath.Base(b)+".pitwall.toml", simConfigFor(b))
		calls = append(calls,
			call{"validate a config whose battery is " + filepath.Base(b), []string{"validate", cfg}, b, nested},
			call{"run a config whose battery is " + filepath.Base(b), []string{"run", "--headless", cfg}, b, nested},
			call{"qualify a config whose battery is " + filepath.Base(b), []string{"qualify", "--headless", cfg}, b, nested},
			call{"import with " + filepath.Base(b) + " as the battery", []string{"import", export, "--battery", b}, b, nested},
		)
	}
	calls = append(calls,
		call{"validate a nested config", []string{"validate", deepConfig}, deepConfig, nested},
		call{"run a nested config", []string{"run", "--headless", deepConfig}, deepConfig, nested},
		call{"qualify a nested config", []string{"qualify", "--headless", deepConfig}, deepConfig, nested},
		call{"import nested results", []string{"import", deepJSON, "--battery", okBattery}, deepJSON, nested},
	)
	// What the same binary takes to validate a good config is the floor:
	// a race-enabled build, as CI's, starts at over 100 MB. Refusing a
	// file may cost a few MB beyond it, never the file.
	okCfg := write("ok.pitwall.toml", simConfigFor(okBattery))
	code, stderr, _, floor := boundedRun(t, dir, "validate", okCfg)
	if code != 0 {
		t.Fatalf("validate of a good config exited %d: %s", code, stderr)
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			code, stderr, took, rss := boundedRun(t, dir, append(c.args, "--db", filepath.Join(t.TempDir(), "l.db"))...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr: %s", code, stderr)
			}
			if !strings.Contains(stderr, c.names) || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr does not name %s and say %q:\n%s", c.names, c.want, stderr)
			}
			if took > 5*time.Second {
				t.Errorf("took %v to refuse it", took.Round(time.Millisecond))
			}
			if rss > floor+64<<20 {
				t.Errorf("peak RSS %d MB refusing it, want under %d MB (what validating a good config takes, plus 64)", rss>>20, (floor+64<<20)>>20)
			}
		})
	}
}

// simConfigFor is a config that runs battery on a simulated server.
func simConfigFor(battery string) string {
	return fmt.Sprintf("name = \"x\"\nmodels = [\"m\"]\nbattery = %q\n[[servers]]\nname = \"s\"\nkind = \"sim\"\nmodels = [\"m\"]\n", battery)
}

// TestAFIFOIsRefusedWithinASecond calls the commands in process, where no
// process start blurs the time: a FIFO with no writer must be refused on
// what it is, not opened and waited on.
func TestAFIFOIsRefusedWithinASecond(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	cfg := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(cfg, []byte(simConfigFor(fifo)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"validate", fifo}, {"validate", cfg}, {"qualify", "--headless", fifo}, {"qualify", "--headless", cfg},
		{"import", fifo, "--battery", cfg, "--db", filepath.Join(dir, "l.db")},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			done := make(chan int, 1)
			var errb bytes.Buffer
			go func() { done <- Main(args, nil, &bytes.Buffer{}, &errb) }()
			select {
			case code := <-done:
				if code != 2 || !strings.Contains(errb.String(), fifo) || !strings.Contains(errb.String(), "named pipe") {
					t.Errorf("exit %d, stderr %q; want 2 naming %s as a named pipe", code, errb.String(), fifo)
				}
			case <-time.After(time.Second):
				// Unblock the reader so the goroutine ends with the test.
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				t.Fatalf("pitwall %s did not return within a second", strings.Join(args, " "))
			}
		})
	}
}
