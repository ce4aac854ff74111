package outfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leftovers lists the temporary files Write left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".pitwall-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteMakesANewFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	if k, err := Check(p); err != nil || k != Absent {
		t.Fatalf("Check of a new path: %v, %v; want Absent", k, err)
	}
	if err := Write(p, nil, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new" {
		t.Fatalf("read back %q, %v; want %q", got, err, "new")
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteReplacesAnExistingFileWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	if err := os.WriteFile(p, []byte("an older, longer report"), 0o644); err != nil {
		t.Fatal(err)
	}
	if k, err := Check(p); err != nil || k != File {
		t.Fatalf("Check of a file: %v, %v; want File", k, err)
	}
	if err := Write(p, nil, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("read back %q, want %q", got, "new")
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestDashIsStandardOutput(t *testing.T) {
	var out bytes.Buffer
	if k, err := Check("-"); err != nil || k != Stream {
		t.Fatalf("Check(-): %v, %v; want Stream", k, err)
	}
	if err := Write("-", &out, []byte("to stdout")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "to stdout" {
		t.Errorf("stdout got %q", out.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was made")
	}
}

func TestWriteRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, path, want string
	}{
		{"directory", dir, dir + " is a directory"},
		{"missing folder", filepath.Join(dir, "no", "such", "r.json"), "the folder " + filepath.Join(dir, "no", "such") + " does not exist"},
		{"no path", "", "no file named"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, cerr := Check(tc.path)
			werr := Write(tc.path, nil, []byte("x"))
			for _, err := range []error{cerr, werr} {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want one saying %q", err, tc.want)
				}
			}
		})
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the directory is gone: %v", err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}
