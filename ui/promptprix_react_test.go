package ui

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pitwall/config"
	_ "pitwall/edges/promptprix" // the battery's format; the test alone links the edge
	"pitwall/runner/history"
	"pitwall/runner/state"
)

// prompt-prix's own ReAct benchmark, run on the simulator and read back
// from the ledger as `show` reads it: the detail of a loop that took
// several steps shows each step's calls and what they were answered with.
func TestDetailShowsTheStepsOfPromptPrixsReActBenchmark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	battery, err := filepath.Abs("../edges/promptprix/testdata/prompt-prix/react_file_categorization_benchmark.json")
	if err != nil {
		t.Fatal(err)
	}
	conf := `name = "react"
battery = ` + strconv.Quote(battery) + `
models = ["coherent"]
db = ` + strconv.Quote(filepath.Join(dir, "ledger.db")) + `
[run]
timeout = "30s"
[[sim.models]]
name = "coherent"
skill = 1.0
skills = { agent = 1.0 }
[[servers]]
name = "gpu0"
kind = "sim"
slots = 2
models = ["coherent"]
[scoring]
mode = "deterministic"
`
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sim.TimeScale = 0
	r, led, _ := startOnSim(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.Wait(ctx)

	snap, err := history.LoadSnapshot(led, r.ID(), "")
	if err != nil {
		t.Fatal(err)
	}
	// The steps are the snapshot's (LoadCell reads what a snapshot clips,
	// and a snapshot keeps a loop whole).
	cell := snap.Cell(0, 0, 0)
	if len(cell.Said().Steps) < 2 {
		t.Fatalf("coherent × %s read back with %d steps (%s %s), want a loop of several", cell.Test, len(cell.Said().Steps), cell.Status, cell.Said().Error)
	}
	var obs string
	for _, s := range cell.Said().Steps {
		for _, c := range s.Calls {
			if c.Name == "read_file" && obs == "" {
				obs = strings.Fields(c.Observation)[0]
			}
		}
	}
	if obs == "" {
		t.Fatal("the loop read no file")
	}
	opts := Options{Ledger: ledgerFuncs{whole: func(ref state.CellRef) (*state.Cell, error) { return history.LoadCell(led, r.ID(), ref) }}}
	m := testModel(140, 400, opts, newFakeCtrl(snap))
	show(m, snap)
	run(m, press(m, "enter"))
	got := drawn(m)
	for _, want := range []string{"list_directory", "read_file", "move_file", obs} {
		if !strings.Contains(got, want) {
			t.Errorf("the detail lacks %q:\n%s", want, got)
		}
	}
}
