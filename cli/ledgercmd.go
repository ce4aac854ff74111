package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// cmdLedger is `pitwall ledger copy FROM TO`.
func cmdLedger(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(stdout, "Usage: pitwall ledger copy FROM TO\n\nThe ledger's one subcommand: pitwall ledger copy --help says what it does.")
		return state.ExitOK
	}
	if len(args) == 0 || args[0] != "copy" {
		fmt.Fprintln(stderr, "pitwall ledger: the one subcommand is copy: pitwall ledger copy FROM TO")
		return state.ExitSetup
	}
	fs := newFlagSet("ledger copy", "pitwall ledger copy FROM TO",
		"Copies every run of the ledger FROM that the ledger TO does not hold (by id), with its requests,\n"+
			"cells, verdicts and exit code, each run whole in one transaction: a workstation's SQLite file\n"+
			"into a team's PostgreSQL (postgres://...), or back. Copying again adds nothing. A run still\n"+
			"running is left out: copy it once it has ended. FROM is opened read-only.", stderr)
	pos, err := parseArgs(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "pitwall ledger copy: give two ledgers, FROM and TO (a path or a postgres:// URL)")
		return state.ExitSetup
	}
	from, err := openLedger(pos[0])
	if err != nil {
		return failf(stderr, err)
	}
	defer from.Close()
	to, err := ledger.Open(pos[1])
	if err != nil {
		return failf(stderr, err)
	}
	res, err := ledger.Copy(from, to)
	if cerr := to.Close(); err == nil {
		err = cerr
	}
	if len(res.Copied) > 0 || err == nil {
		fmt.Fprintf(stdout, "copied %d runs (%d requests) from %s to %s\n", len(res.Copied), res.Requests,
			ledgerShown(pos[0]), ledgerShown(pos[1]))
	}
	if len(res.Present) > 0 {
		fmt.Fprintf(stdout, "left %d runs that %s already holds\n", len(res.Present), ledgerShown(pos[1]))
	}
	if len(res.Running) > 0 {
		fmt.Fprintf(stdout, "left %d runs still running (%s): copy them once they end\n", len(res.Running), strings.Join(res.Running, ", "))
	}
	if err != nil {
		return failf(stderr, err)
	}
	return 0
}
