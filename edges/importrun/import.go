package importrun

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pitwall/config"
	"pitwall/internal/textutil"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// ServerImported is the server a cell of an imported run names: no server
// of pitwall's answered it.
const ServerImported = "(imported)"

// Options says what Import brings in and how.
type Options struct {
	// Battery is the battery the run ran: its tests are joined to the
	// file's on their ids, and their checks run on every reply.
	Battery string
	// Name is the run's name; "" names it after the battery and the file.
	Name string
	// Now is the clock (nil: time.Now). The run's start and end are the
	// time of the import, so `last` finds it; the file's own time is kept
	// in the run's record.
	Now func() time.Time
}

// Summary says what Import did.
type Summary struct {
	RunID      string
	Format     string
	ConfigPath string // the config written for the run (imports/RUN.toml)
	Models     int
	Tests      int
	Repeat     int
	Status     string                   // the run's status: completed, or stopped when cells are ⊘
	Cells      map[state.CellStatus]int // cells by status
	// Verdicts compares the other tool's verdicts with pitwall's checks,
	// one line per way they differ; none when they agree.
	Verdicts []string
	// Notes say what the file held that the import read differently or
	// left out; Warnings what the battery's loader said.
	Notes    []string
	Warnings []string
}

// Import reads a finished run from file and records it in led as a run
// pitwall sent no request for (see the package comment). It writes the
// run's config beside the ledger, in imports/RUN.toml. An error leaves no
// run behind, unless writing the ledger failed half-way: the run then
// reads failed, saying why.
func Import(led *ledger.Ledger, file string, opts Options) (*Summary, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	// Read as every file a user names is read (regular, size-capped); the
	// nesting cap waits for Parse to know the file is not a zip.
	data, err := config.ReadInput(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	src, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(src.Models) == 0 || len(src.Tests) == 0 {
		return nil, fmt.Errorf("%s: the %s holds no results: there is nothing to import", file, src.Format)
	}
	if opts.Battery == "" {
		return nil, errors.New("name the battery the run ran: --battery BATTERY")
	}
	battery, err := filepath.Abs(opts.Battery)
	if err != nil {
		return nil, err
	}
	// The battery's own errors name the battery file, not the config
	// written for it.
	if _, err := config.LoadBattery(battery); err != nil {
		return nil, err
	}
	absFile, _ := filepath.Abs(file)
	started := now()
	id := ledger.NewRunID(started)
	cfgPath, err := filepath.Abs(filepath.Join(filepath.Dir(led.Path()), "imports", id+".toml"))
	if err != nil {
		return nil, err
	}
	db, _ := filepath.Abs(led.Path())
	name := opts.Name
	if name == "" {
		name = fmt.Sprintf("%s (imported from %s)", strings.TrimSuffix(filepath.Base(battery), filepath.Ext(battery)), filepath.Base(file))
	}
	gc := genConfig{Name: name, Battery: battery, Models: src.Models, DB: db, Run: genRun{Repeat: max(src.Repeat, 1)}}
	if err := writeConfig(cfgPath, id, absFile, src.Format, gc); err != nil {
		return nil, err
	}
	cfg, err := config.Load(cfgPath, config.Overrides{}, func(string) string { return "" })
	if err == nil {
		err = join(src, cfg.Tests)
	}
	if err != nil {
		os.Remove(cfgPath)
		return nil, err
	}
	sum := &Summary{RunID: id, Format: src.Format, ConfigPath: cfgPath, Models: len(src.Models), Tests: len(src.Tests),
		Repeat: max(src.Repeat, 1), Cells: map[state.CellStatus]int{}, Notes: src.Notes, Warnings: cfg.Warnings}
	rec := record{led: led, cfg: cfg, src: src, id: id, now: now, sum: sum, file: filepath.Base(file)}
	imported := map[string]any{"format": src.Format, "file": absFile, "sha256": digest(data), "battery": battery}
	if !src.RanAt.IsZero() {
		imported["ran_at"] = src.RanAt.UTC().Format(time.RFC3339)
	}
	if len(src.Notes) > 0 {
		imported["notes"] = src.Notes
	}
	if err := rec.write(started, imported); err != nil {
		os.Remove(cfgPath)
		return nil, err
	}
	return sum, nil
}

// join finds each of the file's tests in the battery and names it by the
// battery's id, in the Source's Tests and Results alike.
func join(src *Source, tests []config.Test) error {
	byID := make(map[string]int, len(tests))
	ids := make([]string, len(tests))
	for i, t := range tests {
		byID[t.ID], ids[i] = i, t.ID
	}
	// An id of another tool's (prompt-prix's for a promptfoo config)
	// finds its test when no test has it as its own.
	byAlias := map[string]int{}
	for i, t := range tests {
		for _, a := range t.Aliases {
			if _, own := byID[a]; !own {
				if _, dup := byAlias[a]; !dup {
					byAlias[a] = i
				}
			}
		}
	}
	rename := make(map[string]string, len(src.Tests))
	taken := map[int]string{}
	var missing []string
	for i, key := range src.Tests {
		ref := TestRef{ID: key, Pos: -1}
		if src.Refs != nil {
			ref = src.Refs[i]
		}
		k, ok := byID[ref.ID]
		if !ok {
			k, ok = byAlias[ref.ID]
		}
		if !ok && ref.Pos >= 0 && ref.Pos < len(tests) {
			k, ok = ref.Pos, true
			if h := ref.Hint; h != "" && !sameTest(tests[k].ID, h) {
				return fmt.Errorf("the file's %s is %q, but the battery's test at that place is %q: "+
					"give the battery (or promptfoo config) the run ran, unedited", key, h, tests[k].ID)
			}
		}
		if !ok {
			missing = append(missing, key)
			continue
		}
		if other, dup := taken[k]; dup {
			return fmt.Errorf("the file's %s and %s are both the battery's test %q", other, key, tests[k].ID)
		}
		taken[k] = key
		rename[key] = tests[k].ID
	}
	if len(missing) > 0 {
		return missingTests(missing, ids, src)
	}
	for i, key := range src.Tests {
		src.Tests[i] = rename[key]
	}
	for i := range src.Results {
		src.Results[i].Test = rename[src.Results[i].Test]
	}
	return nil
}

// sameTest reports whether a battery id is the test a file's id hint
// names: the same, or one of its expansions (id/prompt, id#combination).
func sameTest(batteryID, hint string) bool {
	return batteryID == hint || strings.HasPrefix(batteryID, hint+"/") || strings.HasPrefix(batteryID, hint+"#")
}

func missingTests(missing, ids []string, src *Source) error {
	list := make([]string, 0, 6)
	for _, m := range missing[:min(len(missing), 5)] {
		list = append(list, strconv.Quote(m))
	}
	if len(missing) > 5 {
		list = append(list, fmt.Sprintf("and %d more", len(missing)-5))
	}
	hint := "--battery must be the battery the run ran"
	if len(missing) == 1 {
		if near := textutil.Nearest(missing[0], ids, 3); near != "" {
			hint = fmt.Sprintf("did you mean %q? %s", near, hint)
		}
	}
	if src.Refs != nil && len(ids) < len(src.Tests) {
		hint = fmt.Sprintf("the battery has %d tests and the file %d: %s", len(ids), len(src.Tests), hint)
	}
	return fmt.Errorf("the battery has no test for the file's %s (%s)", strings.Join(list, ", "), hint)
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// record writes a joined Source to the ledger.
type record struct {
	led  *ledger.Ledger
	cfg  *config.Config
	src  *Source
	id   string
	file string
	now  func() time.Time
	sum  *Summary
}

// write records the run: its row (running, owned by this process, so a
// crash half-way reads interrupted), every cell, and its end.
func (r *record) write(started time.Time, imported map[string]any) error {
	cfgJSON, err := configJSON(r.cfg, imported)
	if err != nil {
		return err
	}
	sc, err := json.Marshal(r.cfg.Scoring.Redacted())
	if err != nil {
		return err
	}
	row := ledger.RunRow{ID: r.id, Name: r.cfg.Name, Status: ledger.RunRunning, ScoringMode: string(r.cfg.Plan().Mode),
		ConfigJSON: cfgJSON, ScoringJSON: string(sc), Models: r.src.Models, Tests: r.src.Tests,
		Repeat: max(r.src.Repeat, 1), StartedAt: started, Owner: r.led.Self(), Heartbeat: started}
	if err := r.led.CreateRun(row); err != nil {
		return fmt.Errorf("recording the run: %w", err)
	}
	status, msg, err := r.cells()
	if err != nil {
		_ = r.led.FinishRun(r.id, string(state.RunFailed), "the import stopped half-way: "+err.Error(), r.now())
		return fmt.Errorf("recording the run's cells: %w", err)
	}
	if err := r.led.FinishRun(r.id, status, msg, r.now()); err != nil {
		return fmt.Errorf("recording the run's end: %w", err)
	}
	r.sum.Status = status
	return nil
}

// cells writes every cell of the run, test-major as the runner does, and
// says how the run ended.
func (r *record) cells() (status, msg string, err error) {
	byTest := make(map[string]config.Test, len(r.cfg.Tests))
	for _, t := range r.cfg.Tests {
		byTest[t.ID] = t
	}
	type key struct {
		m, t string
		rep  int
	}
	answers := make(map[key]*Result, len(r.src.Results))
	for i := range r.src.Results {
		res := &r.src.Results[i]
		answers[key{res.Model, res.Test, res.Repeat}] = res
	}
	var cmp verdicts
	var agents int
	beat := r.now()
	for _, test := range r.src.Tests {
		t := byTest[test]
		if t.Mode == config.ModeAgent {
			agents++
		}
		for _, m := range r.src.Models {
			for rep := range max(r.src.Repeat, 1) {
				res := answers[key{m, test, rep}]
				if res == nil {
					res = &Result{Model: m, Test: test, Repeat: rep, Outcome: Unfinished,
						Error: "the file has no result for this cell"}
				}
				c, checked := settle(t, *res, toolOf(r.src.Format))
				c.RunID = r.id
				if err := r.led.PutCell(c); err != nil {
					return "", "", err
				}
				r.sum.Cells[state.CellStatus(c.Status)]++
				if checked {
					cmp.add(res, c)
				}
				if now := r.now(); now.Sub(beat) >= ledger.HeartbeatEvery {
					beat = now
					if err := r.led.Heartbeat(r.id, now); err != nil {
						return "", "", err
					}
				}
			}
		}
	}
	r.sum.Verdicts = cmp.lines(toolOf(r.src.Format))
	if agents > 0 {
		r.sum.Notes = append(r.sum.Notes, fmt.Sprintf("%d agent test(s): the file keeps only a final reply, not the tool loop, "+
			"so each is checked as a loop of one turn", agents))
	}
	if n := r.sum.Cells[state.Cancelled]; n > 0 {
		return string(state.RunStopped), fmt.Sprintf("%d cell(s) have no finished result in %s: the run it came from was stopped or cut short", n, r.file), nil
	}
	return string(state.RunCompleted), "", nil
}

// configJSON is the run's config record: the generated config as every run
// records its own (its tests' categories, severities and the battery's
// warnings with it), with the import's provenance under "imported".
func configJSON(cfg *config.Config, imported map[string]any) (string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(cfg.RedactedJSON()), &m); err != nil {
		return "", fmt.Errorf("recording the run's config: %w", err)
	}
	m["imported"] = imported
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("recording the run's config: %w", err)
	}
	return string(b), nil
}

// toolOf names the tool a format comes from, for messages.
func toolOf(format string) string {
	tool, _, _ := strings.Cut(format, " ")
	return tool
}
