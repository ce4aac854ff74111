package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The edges of opening a ledger for writing, each refused at Open with a
// message that names the file and says what to do, rather than found out
// by a write in the middle of a run (or never: a command that waits on a
// write it cannot make).
var (
	// ErrNotWritable: the ledger file, or its folder (where SQLite keeps
	// the -wal and -shm files beside it), cannot be written.
	ErrNotWritable = errors.New("cannot be written")
	// ErrLocked: another process holds the ledger's write lock and did not
	// let go within the busy timeout.
	ErrLocked = errors.New("is locked by another process")
	// ErrCorrupt: the ledger fails SQLite's quick_check.
	ErrCorrupt = errors.New("fails SQLite's integrity check")
)

// checkWritable fails with ErrNotWritable when the ledger at abs exists
// and this process cannot write it or its folder. SQLite itself would open
// a read-only file read-only without a word and fail at the first write.
func checkWritable(abs string) error {
	f, err := os.OpenFile(abs, os.O_RDWR, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return notWritable(err)
	default:
		f.Close()
	}
	// The folder: SQLite creates the -wal and -shm files there.
	probe, err := os.CreateTemp(filepath.Dir(abs), ".pitwall-probe-*")
	if err != nil {
		return notWritable(err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

func notWritable(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is said already
	}
	return fmt.Errorf("%w (%v): pitwall records every run there; make the file and its folder writable, or pass --db with another path",
		ErrNotWritable, err)
}

// isBusy says whether err is SQLite's "database is locked" (SQLITE_BUSY)
// or a read-only refusal (SQLITE_READONLY), by its message: the driver's
// error codes are not part of its API.
func isBusy(err error) bool {
	return err != nil && strings.Contains(err.Error(), "database is locked")
}

func isReadOnlyDB(err error) bool {
	return err != nil && strings.Contains(err.Error(), "readonly database")
}

// explain turns SQLite's words for a lock or a read-only file met while
// opening into pitwall's.
func (l *Ledger) explain(err error) error {
	switch {
	case isBusy(err):
		return fmt.Errorf("%w (%v): another pitwall is writing it, or one stopped mid-write (ctrl+z, kill -STOP) holds it; let that one go on or end, or pass --db with another path",
			ErrLocked, err)
	case isReadOnlyDB(err):
		return fmt.Errorf("%w (%v): make the file and its folder writable, or pass --db with another path", ErrNotWritable, err)
	}
	return err
}

// checkIntegrity refuses a ledger that fails PRAGMA quick_check: writing
// into a damaged file can spread the damage, and its runs are worth more
// than a new one's. What can be read of it still reads (OpenReadOnly
// does not check).
func (l *Ledger) checkIntegrity() error {
	rows, err := l.w.Query("PRAGMA quick_check(5)")
	if err != nil {
		return l.corrupt(err.Error())
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return l.corrupt(err.Error())
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return l.corrupt(err.Error())
	}
	if len(problems) > 0 {
		return l.corrupt(strings.Join(problems, "; "))
	}
	return nil
}

func (l *Ledger) corrupt(what string) error {
	return l.wrap("open", fmt.Errorf("%w (%s): pitwall will not write to it. Read what it still holds (`pitwall runs --db %s`, `pitwall export RUN --db %s -o FILE`), then move it away and start a new ledger (or pass --db with a new path)",
		ErrCorrupt, what, l.path, l.path))
}
