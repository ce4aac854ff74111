package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"

	"pitwall/runner/history"
	"pitwall/runner/ledger"
)

func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("export", "pitwall export RUN [--format json] [-o FILE] [flags]",
		"Prints a run's export. RUN is a run id, a unique prefix of one, or \"last\".", stderr)
	db := ledgerFlag(fs)
	format := fs.String("format", "json", "export format: json")
	out := fs.String("o", "", "write to FILE instead of stdout")
	judgeName := fs.String("judge", "", "whose verdicts to export (default: the run's own judge or jury)")
	id, code, ok := oneRun(fs, args, "export", stderr)
	if !ok {
		return code
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	// Build it whole before touching -o's file: a bad run id or format
	// must not leave an earlier export emptied.
	var buf bytes.Buffer
	if err := history.WriteExport(&buf, led, id, *judgeName, *format); err != nil {
		return failf(stderr, err)
	}
	if *out == "" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = writeFileAtomic(*out, buf.Bytes())
	}
	if err != nil {
		return failf(stderr, err)
	}
	return 0
}

// exportBeside writes run id's JSON export, with judge's verdicts ("" for
// the run's own), to pitwall-ID.json in the ledger's folder and says where:
// the grid's export key on a run that can only be browsed.
//
// runner.Run.Export does the same for a live run; both would call one
// history helper (history.WriteExport's file-writing sibling) once it
// exists.
func exportBeside(led *ledger.Ledger, id, judge string) (string, error) {
	path := filepath.Join(filepath.Dir(led.Path()), "pitwall-"+id+".json")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := history.WriteExport(f, led, id, judge, "json"); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// writeFileAtomic writes data to path through a temporary file beside it,
// so that path holds either its old content or all of the new.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".pitwall-export-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.Chmod(f.Name(), mode); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
