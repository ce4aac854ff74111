package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"pitwall/runner/state"
	"text/tabwriter"
	"time"
)

func cmdRuns(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("runs", "pitwall runs [flags]", "Lists the runs in the ledger, newest first.", stderr)
	db := ledgerFlag(fs)
	limit := fs.Int("n", 20, "how many runs to list")
	if _, err := parseArgs(fs, args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	runs, err := led.Runs(*limit)
	if err != nil {
		return failf(stderr, err)
	}
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "no runs in %s\n", *db)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tSCORING\tCELLS\tSTARTED\tTOOK")
	for _, r := range runs {
		took := "-"
		if !r.EndedAt.IsZero() {
			took = r.EndedAt.Sub(r.StartedAt).Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Name, r.Status, r.ScoringMode,
			len(r.Models)*len(r.Tests)*max(r.Repeat, 1), r.StartedAt.Local().Format("2006-01-02 15:04:05"), took)
	}
	tw.Flush()
	return 0
}
