package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("export", "pitwall export RUN [RUN...] [--format FORMAT] [-o FILE] [flags]",
		"Writes a run's report. RUN is a run id, a unique prefix of one, or \"last\"; several runs give\n"+
			"each run's report and their comparison (each later run against the first).\n\n"+
			"Formats (--format, or the extension of -o's file; json when neither says):\n"+
			"  json   the whole run: cells, verdicts, requests, summary, and the comparison (.json)\n"+
			"  csv    one row per cell, and per judge when a run has several (.csv)\n"+
			"  md     the ranking with intervals, the summary and the grid, for a pull request (.md)\n"+
			"  html   one self-contained page: the grid, filters, each cell on click; no network (.html)\n"+
			"  junit  JUnit XML: a testsuite per model, a testcase per test and repeat, for CI (.xml)\n"+
			"  text   the comparison as plain tables, as `pitwall compare` prints it (.txt)", stderr)
	db := ledgerFlag(fs)
	format := fs.String("format", "", "export format: "+strings.Join(history.Formats(), ", ")+" (default json, or -o's extension)")
	out := fs.String("o", "", "write to FILE instead of stdout (- is stdout; a device or FIFO is written to, never replaced)")
	judgeName := fs.String("judge", "", "whose verdicts to export (default: each run's own judge or jury)")
	ids, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	if len(ids) == 0 {
		fmt.Fprintln(stderr, "pitwall export: name one run or more (an id, a prefix, or \"last\"); `pitwall runs` lists them")
		return state.ExitSetup
	}
	if err := checkOut("-o", *out); err != nil {
		return failf(stderr, err)
	}
	f, err := outputFormat(*format, *out, history.FormatJSON)
	if err != nil {
		return failf(stderr, err)
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	// Build it whole before touching -o's file: a bad run id or format
	// must not leave an earlier export emptied.
	var buf bytes.Buffer
	if err := history.Write(&buf, led, ids, f, *judgeName); err != nil {
		return failf(stderr, err)
	}
	return emit(buf.Bytes(), *out, stdout, stderr)
}

// exportBeside writes run id's export in format, with judge's verdicts (""
// for the run's own), to pitwall-ID.EXT in the ledger's folder and says
// where: the grid's export key on a run that can only be browsed.
// runner.Run.Export does the same for a live run: both call
// history.ExportFile.
func exportBeside(led *ledger.Ledger, id, judge, format string) (string, error) {
	return history.ExportFile(led, "", id, judge, format)
}
