package runner

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/config"
	"pitwall/edges/sim"
	"pitwall/gpu/simspec"
)

// One model and one judge model that two servers spell two ways (a
// simulated Ollama lists "m:latest", a simulated LM Studio "pub/m"): the
// cells spread over both servers, each request names the model as its
// server lists it, and the run, its cells, its requests and its export keep
// the config's names. The judge is on server = "any".
func TestARunNamesModelsAsTheConfigAndSendsThemAsTheServersDo(t *testing.T) {
	t.Parallel()
	start := func(name, backend string, models, preload []string) *sim.Server {
		s, err := sim.Start(sim.Config{Name: name, Slots: 1, Models: models, Instant: true,
			Spec: simspec.Server{Backend: backend, Preload: preload}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	// Both hold m from the start, so that resident-first gives both work
	// (six jobs on one slot each are too few to load a second copy).
	s0 := start("s0", sim.BackendOllama, []string{"m:latest", "jm:latest"}, []string{"m:latest"})
	s1 := start("s1", sim.BackendLMStudio, []string{"pub/m", "pub/jm"}, []string{"pub/m"})

	dir := t.TempDir()
	var battery strings.Builder
	for i := range 6 {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%d\"\nuser = \"Say %d.\"\nreference = \"%d\"\n\n", i, i, i)
	}
	conf := fmt.Sprintf(`name = "spellings"
battery = "battery.toml"
models = ["m"]
db = %s
[run]
timeout = "10s"
[scoring]
mode = "judge"
[[scoring.judges]]
name = "j"
model = "jm"
server = "any"
[[servers]]
name = "s0"
kind = "ollama"
url = %q
slots = 1
[[servers]]
name = "s1"
kind = "lmstudio"
url = %q
slots = 1
`, quote(filepath.Join(dir, "ledger.db")), s0.URL(), s1.URL())
	for name, body := range map[string]string{"battery.toml": battery.String(), "pitwall.toml": conf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := loadConfig(t, filepath.Join(dir, "pitwall.toml"))
	h := newHarness(t, cfg, true)
	if err := config.CheckOffered(cfg, h.fleet.Offered()); err != nil {
		t.Fatal(err)
	}
	if cfg.Models[0] != "m" || cfg.Scoring.Judges[0].Model != "jm" {
		t.Fatalf("validation renamed the models: %v, judge %q", cfg.Models, cfg.Scoring.Judges[0].Model)
	}
	b := h.finish(t)
	if b.Counts.Completed != 6 || b.Counts.Judged != 6 || b.Counts.JudgeError != 0 {
		t.Fatalf("counts %+v, want 6 cells completed and judged", b.Counts)
	}

	x := h.export(t)
	if strings.Join(x.Models, ",") != "m" {
		t.Errorf("export models %v, want [m]", x.Models)
	}
	ran := map[string]int{}
	for _, c := range x.Cells {
		if c.Model != "m" || c.Status != "completed" || c.Judgments["j"].Verdict == "" {
			t.Errorf("cell %s: model %q, status %s, judged %+v", c.Test, c.Model, c.Status, c.Judgments)
		}
		ran[c.Server]++
	}
	if ran["s0"] == 0 || ran["s1"] == 0 {
		t.Errorf("cells ran on %v, want both servers", ran)
	}
	sent := map[string]int{} // purpose/server/model as recorded
	for _, r := range x.Requests {
		sent[r.Purpose+" "+r.Server+" "+r.Model]++
	}
	for k := range sent {
		if f := strings.Fields(k); f[2] != "m" && f[2] != "jm" {
			t.Errorf("a request recorded as %s, not in the config's names", k)
		}
	}

	// What each server was asked for, by the name it was sent: the
	// simulator answers any other name with a 404.
	judged := 0
	for _, tc := range []struct {
		s         *sim.Server
		model, jm string
	}{{s0, "m:latest", "jm:latest"}, {s1, "pub/m", "pub/jm"}} {
		st := tc.s.Stats()
		if st.Served[tc.model] != int64(ran[tc.s.Name()]) {
			t.Errorf("%s served %v, want %d of %s", tc.s.Name(), st.Served, ran[tc.s.Name()], tc.model)
		}
		for name := range maps.Keys(st.Served) {
			if name != tc.model && name != tc.jm {
				t.Errorf("%s served %q, not its own spelling", tc.s.Name(), name)
			}
		}
		judged += int(st.Served[tc.jm])
		t.Logf("%s served %v, loaded %v", tc.s.Name(), st.Served, st.Loads)
	}
	if judged < 6 {
		t.Errorf("the judge answered %d requests on the servers, want at least 6 (one per cell, warm-ups aside)", judged)
	}
	t.Logf("requests as recorded: %v", sent)
}
