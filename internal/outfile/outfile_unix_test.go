//go:build unix

package outfile

import (
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

// readFIFO makes a FIFO at p and returns what a reader receives from it
// once the writer closes it.
func readFIFO(t *testing.T, p string) <-chan string {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- string(b)
	}()
	return got
}

// makeNull makes a character device like /dev/null (1, 3) at p, or
// skips the test where the system does not permit mknod.
func makeNull(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
		t.Skipf("mknod of a character device is not permitted here (%v): run as root to test writing to one", err)
	}
}

// mkdev is Linux's makedev for small numbers (major < 4096, minor < 256),
// which every Unix accepts alike for 1, 3.
func mkdev(major, minor uint64) uint64 { return major<<8 | minor }

func wantType(t *testing.T, p string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != want {
		t.Errorf("%s is now %v, want %v", p, fi.Mode().Type(), want)
	}
}

func TestWriteKeepsAnExistingFilesMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, nil, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o640 {
		t.Errorf("mode %v after the write, want -rw-r-----", fi.Mode())
	}
	q := filepath.Join(dir, "new.json")
	if err := Write(q, nil, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(q); fi.Mode() != newMode {
		t.Errorf("a new file's mode %v, want %v", fi.Mode(), newMode)
	}
}

func TestWriteFollowsASymlinkAndKeepsIt(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "reports")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(sub, "real.json")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("reports/real.json", link); err != nil {
		t.Fatal(err)
	}
	// A link to a link, and one to a file not made yet.
	link2 := filepath.Join(dir, "link2.json")
	if err := os.Symlink(link, link2); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "later.json")
	if err := os.Symlink("reports/later.json", dangling); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, link2} {
		if err := Write(l, nil, []byte("via "+filepath.Base(l))); err != nil {
			t.Fatal(err)
		}
		wantType(t, l, fs.ModeSymlink)
		if got, _ := os.ReadFile(real); string(got) != "via "+filepath.Base(l) {
			t.Errorf("the target holds %q after writing %s", got, l)
		}
	}
	if fi, _ := os.Stat(real); fi.Mode() != 0o600 {
		t.Errorf("the target's mode is %v, want -rw-------", fi.Mode())
	}
	if err := Write(dangling, nil, []byte("made")); err != nil {
		t.Fatal(err)
	}
	wantType(t, dangling, fs.ModeSymlink)
	if got, _ := os.ReadFile(filepath.Join(sub, "later.json")); string(got) != "made" {
		t.Errorf("the dangling link's target holds %q", got)
	}
	if l := append(leftovers(t, dir), leftovers(t, sub)...); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
	// A link to a directory is refused as the directory is.
	dirLink := filepath.Join(dir, "dirlink")
	if err := os.Symlink(sub, dirLink); err != nil {
		t.Fatal(err)
	}
	if err := Write(dirLink, nil, []byte("x")); err == nil || !strings.Contains(err.Error(), dirLink+" (a link to "+sub+") is a directory") {
		t.Errorf("writing a link to a directory: %v", err)
	}
}

func TestWriteStreamsIntoAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	got := readFIFO(t, p)
	if k, err := Check(p); err != nil || k != Stream {
		t.Fatalf("Check of a FIFO: %v, %v; want Stream", k, err)
	}
	if err := Write(p, nil, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "through the pipe" {
			t.Errorf("the reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader got nothing")
	}
	wantType(t, p, fs.ModeNamedPipe)
	if l := leftovers(t, filepath.Dir(p)); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteLeavesACharacterDeviceADevice(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "null")
	makeNull(t, p)
	if k, err := Check(p); err != nil || k != Stream {
		t.Fatalf("Check of a character device: %v, %v; want Stream", k, err)
	}
	if err := Write(p, nil, []byte("discarded")); err != nil {
		t.Fatal(err)
	}
	wantType(t, p, fs.ModeDevice|fs.ModeCharDevice)
	// Through a symlink too: the device is written, the link kept.
	link := filepath.Join(dir, "link")
	if err := os.Symlink("null", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, nil, []byte("discarded")); err != nil {
		t.Fatal(err)
	}
	wantType(t, link, fs.ModeSymlink)
	wantType(t, p, fs.ModeDevice|fs.ModeCharDevice)
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteSendsToAUnixSocket(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	if err := Write(p, nil, []byte("over the socket")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "over the socket" {
		t.Errorf("the listener got %q", s)
	}
	wantType(t, p, fs.ModeSocket)
}

func TestWriteUnderAFileSaysItIsNoFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(file, "r.json")
	want := p + ": " + file + " is not a folder"
	_, cerr := Check(p)
	werr := Write(p, nil, []byte("x"))
	for _, err := range []error{cerr, werr} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one saying %q", err, want)
		}
	}
}
