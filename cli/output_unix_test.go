//go:build unix

package cli

import (
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests hold every command that writes a file a user names (export
// -o, compare -o, run --out, init -o) to internal/outfile's rules through
// the real command: a device stays a device, a FIFO receives the output,
// - is stdout, a symlink is followed and kept, a directory is refused.

// makeNullDevice makes a character device like /dev/null (1, 3) at p, or
// skips where mknod is not permitted. Never the real /dev/null: as root,
// a writer that replaced it would break the machine.
func makeNullDevice(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod of a character device is not permitted here (%v): run as root to test writing to one", err)
	}
}

// fifoReader makes a FIFO at p and reads it from another goroutine.
// receive waits for what arrived; it first opens and closes a writer of
// its own, so that a command that never opened the FIFO does not leave the
// reader blocked for ever (that reader gets "").
func fifoReader(t *testing.T, p string) (receive func() string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- ""
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	return func() string {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case s := <-got:
			return s
		case <-time.After(30 * time.Second):
			t.Fatal("the FIFO's reader got nothing in 30 s")
			return ""
		}
	}
}

func wantFileType(t *testing.T, p string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != want {
		t.Errorf("%s is now %v, want it left %v", p, fi.Mode().Type(), want)
	}
}

// writesThrough runs a command that writes its output to the path given,
// once for each kind of target, and checks with check what arrived.
func writesThrough(t *testing.T, cmd func(t *testing.T, out string) (int, string, string), check func(t *testing.T, got string)) {
	t.Run("character device stays a device", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "n")
		makeNullDevice(t, p)
		if code, _, stderr := cmd(t, p); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		wantFileType(t, p, fs.ModeDevice|fs.ModeCharDevice)
	})
	t.Run("FIFO receives the output", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "fifo")
		receive := fifoReader(t, p)
		code, _, stderr := cmd(t, p)
		got := receive()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		check(t, got)
		wantFileType(t, p, fs.ModeNamedPipe)
	})
	t.Run("dash is stdout", func(t *testing.T) {
		code, stdout, stderr := cmd(t, "-")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		check(t, stdout)
		if _, err := os.Stat("-"); err == nil {
			t.Error("a file named - was made")
		}
	})
	t.Run("symlink is followed and kept", func(t *testing.T) {
		dir := t.TempDir()
		real := filepath.Join(dir, "real.out")
		if err := os.WriteFile(real, []byte("old"), 0o640); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link")
		if err := os.Symlink("real.out", link); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := cmd(t, link); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		wantFileType(t, link, fs.ModeSymlink)
		raw, _ := os.ReadFile(real)
		check(t, string(raw))
		if fi, _ := os.Stat(real); fi.Mode() != 0o640 {
			t.Errorf("the link's target has mode %v now, want -rw-r-----", fi.Mode())
		}
	})
	t.Run("directory is refused", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := cmd(t, dir)
		if code != 2 || !strings.Contains(stderr, dir+" is a directory") {
			t.Errorf("exit %d, stderr %q; want exit 2 saying %s is a directory", code, stderr, dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("the directory is gone: %v", err)
		}
	})
}

// wantJSONRun checks a JSON export of the demo run: 80 cells.
func wantJSONRun(t *testing.T, got string) {
	t.Helper()
	var x struct {
		Cells []json.RawMessage `json:"cells"`
	}
	if err := json.Unmarshal([]byte(got), &x); err != nil || len(x.Cells) != 80 {
		t.Errorf("got %d bytes (%v, %d cells); want the demo run's JSON export of 80 cells", len(got), err, len(x.Cells))
	}
}

func TestExportWritesThroughWhatIsNoFile(t *testing.T) {
	db, id := demoRun(t, 1)
	// No --format: a device or FIFO named without an extension, and -,
	// take export's default, json.
	writesThrough(t, func(t *testing.T, out string) (int, string, string) {
		args := []string{"export", id, "--db", db, "-o", out}
		if strings.HasSuffix(out, "link") {
			args = append(args, "--format", "json")
		}
		return inproc(t, args...)
	}, wantJSONRun)
}

func TestCompareWritesThroughWhatIsNoFile(t *testing.T) {
	db, id := demoRun(t, 1)
	_, want, _ := inproc(t, "compare", id, "--db", db)
	if !strings.Contains(want, "qwen3-8b") {
		t.Fatalf("compare to stdout printed no ranking:\n%s", want)
	}
	writesThrough(t, func(t *testing.T, out string) (int, string, string) {
		args := []string{"compare", id, "--db", db, "-o", out}
		if strings.HasSuffix(out, "link") {
			args = append(args, "--format", "text")
		}
		return inproc(t, args...)
	}, func(t *testing.T, got string) {
		if got != want {
			t.Errorf("got %d bytes, want the %d of compare's stdout:\n%s", len(got), len(want), got)
		}
	})
}

func TestRunOutWritesThroughWhatIsNoFile(t *testing.T) {
	writesThrough(t, func(t *testing.T, out string) (int, string, string) {
		dir := t.TempDir()
		cfg := demoConfig(t, dir, 1)
		if strings.HasSuffix(out, "link") {
			// --out takes its format from the name: a link named for it.
			link := out + ".json"
			if err := os.Symlink(out, link); err != nil {
				t.Fatal(err)
			}
			out = link
		}
		code, stdout, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", filepath.Join(dir, "l.db"), "--out", out)
		if code == 1 { // the demo has failures; the report was still written
			code = 0
		}
		if out == "-" {
			// The report follows the final grid on stdout.
			if i := strings.Index(stdout, "{\n"); i >= 0 {
				stdout = stdout[i:]
			}
		}
		return code, stdout, stderr
	}, wantJSONRun)
}

func TestRunRefusesAnOutItCannotWriteBeforeItStarts(t *testing.T) {
	dir := t.TempDir()
	cfg := demoConfig(t, dir, 1)
	db := filepath.Join(dir, "l.db")
	missing := filepath.Join(dir, "no-such-folder")
	for out, want := range map[string]string{
		dir:                              dir + " is a directory",
		filepath.Join(missing, "r.json"): "the folder " + missing + " does not exist",
	} {
		code, _, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db, "--out", out)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("--out %s: exit %d, stderr %q; want exit 2 saying %q", out, code, stderr, want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the run started (its ledger exists) before --out was refused")
	}
}

func TestInitWritesThroughWhatIsNoFile(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	writesThrough(t, func(t *testing.T, out string) (int, string, string) {
		// A config that is no file has its battery put in the current
		// folder: this test's own.
		cwd := t.TempDir()
		t.Chdir(cwd)
		args := []string{"init", "--scan=false", "--url", closed, "-o", out}
		if strings.HasSuffix(out, "link") {
			args = append(args, "--force") // the link's target exists
		}
		code, stdout, stderr := inproc(t, args...)
		if code == 0 {
			beside := filepath.Join(filepath.Dir(out), "starter-battery.toml")
			if fi, err := os.Stat(out); out == "-" || err == nil && !fi.Mode().IsRegular() {
				beside = filepath.Join(cwd, "starter-battery.toml")
			}
			if _, err := os.Stat(beside); err != nil {
				t.Errorf("no starter battery at %s: %v", beside, err)
			}
		}
		if out == "-" && strings.Contains(stdout, "wrote ") {
			t.Errorf("init -o - mixed its report into the config on stdout:\n%s", stdout)
		}
		return code, stdout, stderr
	}, func(t *testing.T, got string) {
		if !strings.Contains(got, "NO SERVER WAS FOUND") || !strings.Contains(got, "[[servers]]") {
			t.Errorf("got %d bytes, want init's config:\n%s", len(got), got)
		}
	})
}
