package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"pitwall/internal/outfile"
	"pitwall/runner/compare"
	"pitwall/runner/history"
	"pitwall/runner/state"
)

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compare", "pitwall compare RUN [RUN...] [--by rate|score] [--format text|json|md|html] [-o FILE] [flags]",
		"Ranks each run's models by pass rate with 95% Wilson intervals (or by mean score, with bootstrap\n"+
			"intervals over tests), with per-category rates, latency, TTFT and tok/s medians and p95, tokens\n"+
			"and judge agreement. Models whose intervals overlap are tied (rank \"=N\"). Two runs or more:\n"+
			"each later run against the first, the cells that changed (fixed, broke, flipped) and McNemar's\n"+
			"paired test on the cells both share, which says whether a difference may be noise.\n"+
			"RUN is a run id, a unique prefix of one, or \"last\".\n\n"+
			"--format json prints the comparison alone; md and html the reports of every run with it\n"+
			"(as `pitwall export RUN RUN --format md|html`).", stderr)
	db := ledgerFlag(fs)
	by := fs.String("by", compare.ByRate, "rank by pass rate (rate) or mean score (score)")
	level := fs.Float64("level", 0.95, "confidence level of the intervals and tests")
	format := fs.String("format", "", "text (default), json, md or html; from -o's extension when not given")
	out := fs.String("o", "", "write to FILE instead of stdout (- is stdout; a device or FIFO is written to, never replaced)")
	judgeName := fs.String("judge", "", "whose verdicts to compare (default: each run's own judge or jury)")
	ids, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	if len(ids) == 0 {
		fmt.Fprintln(stderr, "pitwall compare: name one run or more (an id, a prefix, or \"last\"); `pitwall runs` lists them")
		return state.ExitSetup
	}
	if *by != compare.ByRate && *by != compare.ByScore {
		return failf(stderr, fmt.Errorf("--by %q: rank by rate or score", *by))
	}
	if !(*level > 0 && *level < 1) {
		return failf(stderr, fmt.Errorf("--level %g: give a confidence level between 0 and 1, such as 0.95", *level))
	}
	if err := checkOut("-o", *out); err != nil {
		return failf(stderr, err)
	}
	f, err := outputFormat(*format, *out, history.FormatText)
	if err != nil || f != history.FormatText && f != history.FormatJSON && f != history.FormatMarkdown && f != history.FormatHTML {
		asked := "--format " + *format // export's list of formats is not compare's
		if *format == "" {
			asked = "-o " + *out
		}
		return failf(stderr, fmt.Errorf("compare %s: use text, json, md or html, by --format or -o's extension (`pitwall export` writes csv and junit)", asked))
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	xs, rep, err := history.Exports(led, ids, *judgeName, compare.Options{By: *by, Level: *level})
	if err != nil {
		return failf(stderr, err)
	}
	if f != history.FormatText {
		// The text report opens with them; the others carry them in their
		// data, where a reader may not look.
		for _, w := range rep.Warnings {
			fmt.Fprintln(stderr, "pitwall: warning: "+w)
		}
	}
	var buf bytes.Buffer
	if f == history.FormatJSON {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = history.Render(&buf, f, xs, rep)
	}
	if err != nil {
		return failf(stderr, err)
	}
	return emit(buf.Bytes(), *out, stdout, stderr)
}

// outputFormat is the format a command writes: --format when given, else
// the extension of -o's file, else def.
func outputFormat(format, out, def string) (string, error) {
	if format != "" {
		return history.ParseFormat(format)
	}
	return formatOf(out, def)
}

// formatOf is the format of a report written to out: def for stdout ("" or
// "-") and for a device or FIFO named without an extension (/dev/stdout),
// else its extension's.
func formatOf(out, def string) (string, error) {
	if out == "" || out == outfile.Stdout {
		return def, nil
	}
	if filepath.Ext(out) == "" {
		if k, err := outfile.Check(out); err == nil && k == outfile.Stream {
			return def, nil
		}
	}
	return history.FormatFromPath(out)
}

// checkOut refuses, before any work, an output path that cannot be
// written (a directory, a folder that is not there); flag names the flag.
func checkOut(flag, out string) error {
	if out == "" {
		return nil
	}
	if _, err := outfile.Check(out); err != nil {
		return fmt.Errorf("%s %w", flag, err)
	}
	return nil
}

// emit writes a finished report to stdout, or to out by outfile's rules (a
// file is replaced only by a complete one; a device or FIFO is written to).
func emit(data []byte, out string, stdout, stderr io.Writer) int {
	if out == "" {
		out = outfile.Stdout
	}
	if err := outfile.Write(out, stdout, data); err != nil {
		return failf(stderr, err)
	}
	return 0
}
