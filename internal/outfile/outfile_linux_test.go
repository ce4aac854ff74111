//go:build linux

package outfile

import (
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestFailedWriteKeepsTheOldFile makes the temporary file's write fail
// (a file size limit, EFBIG): the old file must stay whole and no
// temporary file may be left.
func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	if err := os.WriteFile(p, []byte("the old report"), 0o640); err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	// Past the limit the kernel sends SIGXFSZ, which would kill the test.
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	lim := old
	lim.Cur = 1024
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	err := Write(p, nil, make([]byte, 64<<10))
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "writing "+p+": ") {
		t.Fatalf("a write past the size limit: %v; want an error naming %s", err, p)
	}
	if got, _ := os.ReadFile(p); string(got) != "the old report" {
		t.Errorf("the old file holds %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode() != 0o640 {
		t.Errorf("the old file's mode is %v", fi.Mode())
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// A descriptor's name (/dev/stdout is a link to /proc/self/fd/1) is
// written where the descriptor points, here a pipe: no file is made.
func TestWriteToADescriptorsName(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	dir := t.TempDir()
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), link); err != nil {
		t.Fatal(err)
	}
	fd := "/dev/fd/" + strconv.Itoa(int(w.Fd()))
	for _, p := range []string{fd, link} {
		if k, err := Check(p); err != nil || k != Stream {
			t.Fatalf("Check(%s): %v, %v; want Stream", p, k, err)
		}
		if err := Write(p, nil, []byte(p+";")); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if s := <-got; s != fd+";"+link+";" {
		t.Errorf("the pipe got %q", s)
	}
}
