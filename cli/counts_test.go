package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pitwall/edges/sim"
	"pitwall/gpu/simspec"
)

// TestSummaryCountsOnlyRequestsThatWereSent is issue 17's repro: after a
// max_wait give-up the summary said "38 requests" where 23 reached a
// server. A server that goes down after two requests and stays down leaves
// the rest of a 12-test battery waiting until max_wait gives up on them:
// the end-of-run summary, `show` and the export must count as sent exactly
// the requests the server received, and show the rest as abandoned.
func TestSummaryCountsOnlyRequestsThatWereSent(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(sim.Config{Name: "gpu0", Slots: 1, Models: []string{"m"}, Seed: 7, TimeScale: 0.01,
		Spec: simspec.Server{Backend: "vllm", Faults: simspec.Faults{CrashAfter: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	const tests = 12
	var battery strings.Builder
	for i := range tests {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%d\"\nuser = \"Say %d.\"\n\n", i, i)
	}
	conf := fmt.Sprintf(`name = "goes-down"
battery = "battery.toml"
models = ["m"]
[run]
timeout = "20s"
retries = 1
max_wait = "2s"
[[servers]]
name = "gpu0"
kind = "vllm"
url = %q
slots = 1
models = ["m"]
`, srv.URL())
	for name, body := range map[string]string{"battery.toml": battery.String(), "pitwall.toml": conf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "ledger.db")
	code, stdout, stderr := pitwall(t, dir, nil, "run", "pitwall.toml", "--headless", "--db", db)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (cells ended ⚠️ unavailable); stderr:\n%s", code, stderr)
	}
	received := int(srv.Stats().Requests)
	if received == 0 || received >= tests {
		t.Fatalf("the server received %d requests: the scenario needs some sent and some given up", received)
	}

	out := filepath.Join(dir, "run.json")
	if code, _, stderr := pitwall(t, dir, nil, "export", "last", "--format", "json", "-o", out, "--db", db); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			Requests  map[string]int `json:"requests_by_purpose"`
			Sent      map[string]int `json:"requests_sent_by_purpose"`
			Abandoned map[string]int `json:"requests_abandoned_by_purpose"`
		} `json:"summary"`
		Inference struct {
			Requests, Cells, Live, Abandoned int
		} `json:"inference"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	s, inf := doc.Summary, doc.Inference
	sentAll := 0
	for _, n := range s.Sent {
		sentAll += n
	}
	if sentAll != received || inf.Live != s.Sent["inference"] {
		t.Errorf("export: %v sent by purpose, %d inference live, but the server received %d", s.Sent, inf.Live, received)
	}
	if s.Abandoned["inference"] == 0 || s.Abandoned["inference"] != inf.Abandoned ||
		s.Sent["inference"]+s.Abandoned["inference"] != s.Requests["inference"] || inf.Requests != s.Requests["inference"] {
		t.Errorf("export: requests %v, sent %v, abandoned %v; inference %+v", s.Requests, s.Sent, s.Abandoned, inf)
	}
	if inf.Cells != tests {
		t.Errorf("export: inference for %d cells, want %d", inf.Cells, tests)
	}

	line := regexp.MustCompile(`inference (\d+) requests(?: for (\d+) cells)? \((\d+) sent, (\d+) abandoned before sending\)`)
	check := func(what, out string) {
		t.Helper()
		m := line.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("%s: no inference line with sent and abandoned counts:\n%s", what, out)
			return
		}
		all, _ := strconv.Atoi(m[1])
		sent, _ := strconv.Atoi(m[3])
		abandoned, _ := strconv.Atoi(m[4])
		if sent != s.Sent["inference"] {
			t.Errorf("%s: %d sent, but the server received %d inference requests:\n%s", what, sent, s.Sent["inference"], m[0])
		}
		if abandoned == 0 || sent+abandoned != all {
			t.Errorf("%s: %d sent + %d abandoned is not the %d requests:\n%s", what, sent, abandoned, all, m[0])
		}
		if cells := m[2]; cells != "" && cells != strconv.Itoa(tests) {
			t.Errorf("%s: %s cells, want %d", what, cells, tests)
		}
	}
	check("the end-of-run summary", stdout+stderr)
	_, showOut, showErr := pitwall(t, dir, nil, "show", "last", "--headless", "--db", db)
	check("show", showOut+showErr)
}
