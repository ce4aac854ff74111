package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What the resume, retry and rejudge tests share: a simulated fleet served
// by a `pitwall sim` process of its own, which outlives the pitwall runs
// that are killed and resumed against it and counts what it received.

// simFleet is a `pitwall sim` child process and its servers' URLs.
type simFleet struct {
	urls map[string]string // server name → base URL (…/v1)
}

// startSimFleet serves the kind = "sim" servers of config (a file in dir)
// until the test ends, at the given time scale.
func startSimFleet(t *testing.T, dir, config, timeScale string) *simFleet {
	t.Helper()
	cmd := exec.Command(bin, "sim", config, "--time-scale", timeScale)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := startServer(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	})
	f := &simFleet{urls: map[string]string{}}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) >= 2 && strings.HasPrefix(fields[1], "http://127.0.0.1:") {
			f.urls[fields[0]] = fields[1]
		}
		if strings.HasPrefix(lines.Text(), "serving") {
			break
		}
	}
	if len(f.urls) == 0 {
		t.Fatalf("pitwall sim %s served nothing:\n%s", config, stderr.String())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return f
}

// simState is the part of a sim server's GET /sim/state the tests read.
type simState struct {
	InFlight int `json:"in_flight"`
	Models   map[string]struct {
		Requests int64 `json:"requests"`
	} `json:"models"`
}

// requests is how many chat requests the fleet has accepted, by model,
// over all its servers, once none is in flight: a request a killed client
// had sent is counted by then.
func (f *simFleet) requests(t *testing.T) map[string]int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, busy := map[string]int64{}, 0
		for name, u := range f.urls {
			resp, err := http.Get(strings.TrimSuffix(u, "/v1") + "/sim/state")
			if err != nil {
				t.Fatalf("sim server %s: %v", name, err)
			}
			var st simState
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("sim server %s: /sim/state: %v", name, err)
			}
			busy += st.InFlight
			for m, s := range st.Models {
				out[m] += s.Requests
			}
		}
		if busy == 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the simulated fleet still has %d requests in flight after 30s", busy)
		}
		time.Sleep(20 * time.Millisecond) // polling another process's state: there is nothing to wait on here
	}
}

// sent is how many requests for the given models the fleet accepted
// between two counts.
func sent(before, after map[string]int64, models ...string) int64 {
	var n int64
	for _, m := range models {
		n += after[m] - before[m]
	}
	return n
}

// writeFile writes text to dir/name and returns its absolute path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fullExport is what the tests compare of a run's JSON export.
type fullExport struct {
	Run struct {
		ID, Status string
	} `json:"run"`
	Cells []struct {
		Model     string
		Test      string
		Repeat    int
		Status    string
		Output    string
		Verdict   *string
		Attempts  int
		Judgments map[string]struct {
			Verdict string
			Source  string
		}
	} `json:"cells"`
	Requests []struct {
		ID      int64
		Purpose string
		Server  string
		Model   string
		Test    string
		Repeat  int
		Judge   string
		Sample  int
		Attempt int
		Status  string
	} `json:"requests"`
}

// exportRun is `pitwall export RUN --format json --db DB`.
func exportRun(t *testing.T, dir, db, run string) fullExport {
	t.Helper()
	code, out, errOut := pitwall(t, dir, nil, "export", run, "--format", "json", "--db", db)
	if code != 0 {
		t.Fatalf("export %s exited %d: %s", run, code, errOut)
	}
	var x fullExport
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	return x
}

// cellKey names a cell in an export.
func cellKey(model, test string, repeat int) string {
	return fmt.Sprintf("%s × %s #%d", model, test, repeat)
}

// sameCells reports, one line per difference, where two exports' cells
// differ in status, output or verdict.
func sameCells(got, want fullExport) []string {
	type view struct{ status, output, verdict string }
	index := func(x fullExport) map[string]view {
		m := map[string]view{}
		for _, c := range x.Cells {
			v := view{status: c.Status, output: c.Output, verdict: "null"}
			if c.Verdict != nil {
				v.verdict = *c.Verdict
			}
			m[cellKey(c.Model, c.Test, c.Repeat)] = v
		}
		return m
	}
	g, w := index(got), index(want)
	var diffs []string
	for k, wv := range w {
		gv, ok := g[k]
		switch {
		case !ok:
			diffs = append(diffs, k+": missing")
		case gv != wv:
			diffs = append(diffs, fmt.Sprintf("%s: got %s/%s %q, want %s/%s %q", k, gv.status, gv.verdict, clip(gv.output), wv.status, wv.verdict, clip(wv.output)))
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			diffs = append(diffs, k+": not in the run that never stopped")
		}
	}
	sort.Strings(diffs)
	return diffs
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
