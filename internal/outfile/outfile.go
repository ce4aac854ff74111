package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Stdout is the name that means standard output.
const Stdout = "-"

// Kind is what a path for output turned out to be.
type Kind int

const (
	// Absent: nothing is there yet; a file is made.
	Absent Kind = iota
	// File: a regular file, replaced whole.
	File
	// Stream: standard output, an open descriptor, a character device, a
	// FIFO or a socket, written to directly.
	Stream
)

// newMode is a new file's mode, as pitwall's exports always had.
const newMode fs.FileMode = 0o644

// maxLinks bounds the symlinks followed, as the kernel does (ELOOP).
const maxLinks = 40

// target is where a path for output leads.
type target struct {
	name string // as the user gave it, for errors
	path string // after links; "-" for standard output
	kind Kind
	info fs.FileInfo // of an existing File
	sock bool        // a Stream that is a Unix socket
}

// Check says what writing path would write to, without writing: a path
// that cannot be written (a directory, a missing folder) is an error naming
// it. Commands call it before long work, so that a bad path fails first.
func Check(path string) (Kind, error) {
	t, err := inspect(path)
	return t.kind, err
}

// Write writes data to path by the package's rules; stdout is where "-"
// goes. Errors name path.
func Write(path string, stdout io.Writer, data []byte) error {
	t, err := inspect(path)
	if err != nil {
		return err
	}
	switch {
	case t.path == Stdout:
		_, err = stdout.Write(data)
	case t.kind == Stream:
		err = stream(t, data)
	default:
		err = replace(t, data)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", t.describe(), bare(err))
	}
	return nil
}

func inspect(name string) (target, error) {
	t := target{name: name, path: name}
	if name == "" {
		return t, errors.New("no file named to write")
	}
	if name == Stdout {
		t.kind = Stream
		return t, nil
	}
	p, descriptor, err := resolve(name)
	if err != nil {
		return t, fmt.Errorf("%s: %w", name, bare(err))
	}
	t.path = p
	if descriptor {
		t.kind = Stream
		return t, nil
	}
	fi, err := os.Stat(p)
	if err != nil {
		// The folder first: under a missing folder or a file, it is the
		// folder that is wrong, not the name.
		dir := filepath.Dir(p)
		switch di, derr := os.Stat(dir); {
		case errors.Is(derr, fs.ErrNotExist):
			return t, fmt.Errorf("%s: the folder %s does not exist", t.describe(), dir)
		case derr == nil && !di.IsDir():
			return t, fmt.Errorf("%s: %s is not a folder", t.describe(), dir)
		case derr != nil:
			return t, fmt.Errorf("%s: %w", t.describe(), bare(derr))
		case errors.Is(err, fs.ErrNotExist):
			t.kind = Absent
			return t, nil
		}
		return t, fmt.Errorf("%s: %w", t.describe(), bare(err))
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		t.kind, t.info = File, fi
	case m.IsDir():
		return t, fmt.Errorf("%s is a directory: name a file to write, or - for standard output", t.describe())
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
		t.kind = Stream
	case m&fs.ModeSocket != 0:
		t.kind, t.sock = Stream, true
	case m&fs.ModeDevice != 0:
		return t, fmt.Errorf("%s is a block device: pitwall writes to files, character devices, FIFOs or - (standard output)", t.describe())
	default:
		return t, fmt.Errorf("%s is not a file pitwall can write (%s)", t.describe(), m.Type())
	}
	return t, nil
}

// describe names the path as given, and where its links led.
func (t target) describe() string {
	if t.path == t.name || t.path == Stdout {
		return t.name
	}
	return fmt.Sprintf("%s (a link to %s)", t.name, t.path)
}

// resolve follows the symlinks at the end of path to what they lead to,
// which may not exist. descriptor says that the chain reached an open
// descriptor's name, whose link (pipe:[N], socket:[N]) is no path.
func resolve(path string) (string, bool, error) {
	p := path
	for range maxLinks {
		if isDescriptor(p) {
			return p, true, nil
		}
		// What Lstat cannot see (nothing there, a folder that is a file)
		// is no link: inspect says what is wrong with it.
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p, false, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", false, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", false, fmt.Errorf("more than %d symlinks", maxLinks)
}

// isDescriptor reports a name under /dev/fd or /proc/PID/fd.
func isDescriptor(p string) bool {
	p = filepath.ToSlash(filepath.Clean(p))
	if strings.HasPrefix(p, "/dev/fd/") {
		return true
	}
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	_, rest, ok = strings.Cut(rest, "/")
	return ok && strings.HasPrefix(rest, "fd/")
}

// stream writes to a device, FIFO, socket or descriptor where it is. A
// FIFO's open waits for a reader, as a shell's redirect does. O_APPEND:
// a descriptor a shell opened with >> is appended to, not overwritten.
func stream(t target, data []byte) error {
	var w io.WriteCloser
	var err error
	if t.sock {
		w, err = net.Dial("unix", t.path)
	} else {
		w, err = os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// replace writes data to a temporary file beside t and renames it over t,
// so that t holds either its old content or all of the new.
func replace(t target, data []byte) (err error) {
	dir := filepath.Dir(t.path)
	f, err := os.CreateTemp(dir, ".pitwall-"+filepath.Base(t.path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	mode := newMode
	if t.info != nil {
		mode = t.info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		keepOwner(f, t.info)
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	// Chmod after chown: a chown clears set-id bits.
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), t.path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename durable where the system allows a folder to be
// synced; where it does not, the rename stands as the system keeps it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// bare drops the path an *fs.PathError carries: it is the temporary
// file's or a link's, and the caller names the user's path.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
