package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The grid's e writes the format asked for, named by its extension, beside
// the ledger.
func TestExportFileWritesTheFormatAsked(t *testing.T) {
	t.Parallel()
	led := newLedger(t)
	const id = "20261121-103551-aaaa"
	putRun(t, led, id, fixtureStart, fixtureCells())
	tests := []struct {
		format, ext, starts string
	}{
		{"json", ".json", "{"},
		{"csv", ".csv", "run,"},
		{"md", ".md", "#"},
		{"html", ".html", "<!doctype html>"},
		{"junit", ".xml", "<?xml"},
		{"text", ".txt", ""},
	}
	for _, tt := range tests {
		path, err := ExportFile(led, "", id, "", tt.format)
		if err != nil {
			t.Fatalf("%s: %v", tt.format, err)
		}
		if want := filepath.Join(filepath.Dir(led.Path()), "pitwall-"+id+tt.ext); path != want {
			t.Errorf("%s: wrote %s, want %s", tt.format, path, want)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 || !strings.HasPrefix(strings.ToLower(string(data)), tt.starts) {
			t.Errorf("%s: the file begins %q, want %q", tt.format, firstLine(string(data)), tt.starts)
		}
		if f, err := FormatFromPath(path); err != nil || f != tt.format {
			t.Errorf("%s: its extension reads back as %q (%v)", tt.format, f, err)
		}
	}
	if _, err := ExportFile(led, "", id, "", "pdf"); err == nil {
		t.Error("a pdf export was written")
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
