package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"pitwall/edges/importrun"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func cmdImport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("import", "pitwall import FILE --battery BATTERY [--db PATH] [--name NAME]",
		"Brings a run another tool finished into the ledger, as a run pitwall sent no request for, so that\n"+
			"show, export and rejudge work on it. FILE is a prompt-prix results or consistency export (its\n"+
			"runs become repeats), the JSON of `promptfoo eval -o results.json`, or an inspect eval log\n"+
			"written as JSON; its kind is told from its content. BATTERY is the battery the run ran (for\n"+
			"promptfoo, its config; for inspect, its dataset): results are joined to its tests by id, and\n"+
			"every reply is checked again by the battery's checks, with tool calls written into the text\n"+
			"(prompt-prix's **Tool Call:** rendering, raw <|tool_call_start|> or <tool_call> tokens) read as\n"+
			"calls. An error in the file is a ⚠️ cell, a cell it holds no answer for a ⊘ cell. The run's\n"+
			"config, naming the battery and the models, is written beside the ledger in imports/RUN.toml.", stderr)
	battery := fs.String("battery", "", "the battery the run ran (required)")
	db := ledgerFlag(fs)
	name := fs.String("name", "", "the run's name (default: the battery's and the file's names)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return state.ExitOK
	} else if err != nil {
		return state.ExitSetup
	}
	switch {
	case len(pos) != 1:
		fmt.Fprintln(stderr, "pitwall import: name one file: pitwall import FILE --battery BATTERY")
		return state.ExitSetup
	case *battery == "":
		fmt.Fprintln(stderr, "pitwall import: name the battery the run ran: --battery BATTERY")
		return state.ExitSetup
	}
	led, err := ledger.Open(*db)
	if err != nil {
		return failf(stderr, err)
	}
	sum, err := importrun.Import(led, pos[0], importrun.Options{Battery: *battery, Name: *name})
	if cerr := led.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the ledger: %w", cerr)
	}
	if err != nil {
		return failf(stderr, err)
	}
	printImport(stdout, sum, pos[0])
	return state.ExitOK
}

// printImport says what was imported and what to do with it next.
func printImport(w io.Writer, s *importrun.Summary, file string) {
	fmt.Fprintf(w, "imported run %s from %s (%s)\n", s.RunID, file, s.Format)
	shape := fmt.Sprintf("%d models × %d tests", s.Models, s.Tests)
	if s.Repeat > 1 {
		shape += fmt.Sprintf(" × %d runs", s.Repeat)
	}
	fmt.Fprintf(w, "  %s: %d ✓ %d ❌ %d ⚠️ %d ⊘ by pitwall's checks; not judged yet\n", shape,
		s.Cells[state.Completed], s.Cells[state.Failed], s.Cells[state.Errored], s.Cells[state.Cancelled])
	if s.Status != string(state.RunCompleted) {
		fmt.Fprintf(w, "  the run reads %s: %d cell(s) have no finished result in the file\n", s.Status, s.Cells[state.Cancelled])
	}
	for _, line := range s.Verdicts {
		fmt.Fprintf(w, "  %s\n", line)
	}
	for _, n := range append(append([]string(nil), s.Notes...), s.Warnings...) {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintf(w, "  its config (battery and models): %s\n", s.ConfigPath)
	fmt.Fprintf(w, "next: pitwall show %s · pitwall export %s --format html -o report.html\n", s.RunID, s.RunID)
}
