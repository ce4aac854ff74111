package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"pitwall/edges/qualify"
	"strings"
	"text/tabwriter"
	"time"

	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func cmdRuns(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("runs", "pitwall runs [-n N] [--json] [flags]",
		"Lists the runs in the ledger, newest first: status (running, completed, stopped, failed, or\n"+
			"interrupted when its process went away), models × tests, cells by outcome under the run's judge\n"+
			"(PASS, FAIL, WARN, ERR: ⚠️ errors and judge errors), the pass rate (PASS over decided cells, as\n"+
			"the summary counts it), the judge in view, how long it took, and the exit code its process\n"+
			"returned, gates and interrupts included (for a run recorded before pitwall kept it, the code\n"+
			"its verdicts earn without gates; — while running or when interrupted).", stderr)
	db := ledgerFlag(fs)
	limit := new(int)
	*limit = 20
	fs.Var(atLeastZero{limit, "runs, or 0 for all"}, "n", "list the newest `N` runs (0 lists all)")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseArgs(fs, args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "db" })
	if _, err := os.Stat(*db); err != nil && !given && !isLedgerURL(*db) {
		// A folder where nothing has run yet: nothing to list, and no
		// mistake either. A --db that names no file is one.
		if *asJSON {
			fmt.Fprintln(stdout, "[]")
		} else {
			fmt.Fprintf(stdout, "no runs yet (no ledger at %s): `pitwall run` makes one\n", *db)
		}
		return 0
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	rows, err := led.Runs(*limit)
	if err != nil {
		return failf(stderr, err)
	}
	runs := make([]runSummary, 0, len(rows))
	for _, r := range rows {
		runs = append(runs, summarizeRun(led, r))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(runs); err != nil {
			return failf(stderr, err)
		}
		return 0
	}
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "no runs yet in %s\n", ledgerShown(*db))
		return 0
	}
	printRuns(stdout, runs)
	return 0
}

// runSummary is one line of `pitwall runs`, and one object of its --json.
type runSummary struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	ScoringMode string     `json:"scoring_mode"`
	Judge       string     `json:"judge"` // in view; "" for checks alone
	Models      int        `json:"models"`
	Tests       int        `json:"tests"`
	Repeat      int        `json:"repeat"`
	Cells       int        `json:"cells"`
	Pass        int        `json:"pass"`
	Fail        int        `json:"fail"`
	Warn        int        `json:"warn"`
	Error       int        `json:"error"`
	JudgeError  int        `json:"judge_error"`
	Decided     int        `json:"decided"`
	Pending     int        `json:"pending"`   // cells in inference or awaiting the judge in view
	PassRate    *float64   `json:"pass_rate"` // null when unknown (compare.Counts.Known)
	Rate        string     `json:"-"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at"`
	DurationMS  *int64     `json:"duration_ms"`
	ExitCode    *int       `json:"exit_code"` // what its process returned; null while running or when interrupted
	Host        string     `json:"host"`      // where its process ran (or runs); "" for runs of builds before heartbeats
	User        string     `json:"user"`      // the user it ran as; "" for runs of builds before schema 9
	Message     string     `json:"message,omitempty"`
	Problem     string     `json:"problem,omitempty"` // why its cells could not be read
}

// summarizeRun reads a run's cells and verdicts back and counts them. A
// run that cannot be read is listed all the same, saying why.
func summarizeRun(led *ledger.Ledger, r ledger.RunRow) runSummary {
	s := runSummary{ID: r.ID, Name: r.Name, Status: r.Status, ScoringMode: r.ScoringMode, Models: len(r.Models),
		Tests: len(r.Tests), Repeat: max(r.Repeat, 1), StartedAt: r.StartedAt, Message: r.Message,
		Host: r.Owner.Host, User: r.Owner.User}
	s.Cells = s.Models * s.Tests * s.Repeat
	if !r.EndedAt.IsZero() {
		end := r.EndedAt
		d := end.Sub(r.StartedAt).Milliseconds()
		s.EndedAt, s.DurationMS = &end, &d
	}
	if ledgerRunIsQualify(r) {
		return s // no model was run: its figures are qualify's, in its requests
	}
	b, err := history.LoadSnapshot(led, r.ID, "")
	if err != nil {
		s.Problem = err.Error()
		return s
	}
	s.Judge = b.Plan.InView
	n := outcomeCounts(b, "")
	s.Pass, s.Fail, s.Warn, s.Error, s.JudgeError, s.Decided = n.Pass, n.Fail, n.Warn, n.Error, n.JudgeError, n.Decided
	s.Pending, s.PassRate, s.Rate = n.Pending, n.PassRate(), n.RateText()
	switch r.Status {
	case ledger.RunRunning, ledger.RunInterrupted:
	default:
		code := exitOf(r, func() int { return state.ExitCode(b, runStrict(r)) })
		s.ExitCode = &code
	}
	return s
}

// runStrict reads [run] strict from a run's config record.
func runStrict(r ledger.RunRow) bool {
	var c struct {
		Run struct {
			Strict bool `json:"strict"`
		} `json:"run"`
	}
	_ = json.Unmarshal([]byte(r.ConfigJSON), &c)
	return c.Run.Strict
}

// runBy says whose a run is: user@host, either alone where the other is
// not known, — for a run of a build that kept neither.
func runBy(s runSummary) string {
	switch {
	case s.User != "" && s.Host != "":
		return s.User + "@" + s.Host
	case s.User != "":
		return s.User
	case s.Host != "":
		return s.Host
	}
	return "—"
}

func printRuns(w io.Writer, runs []runSummary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tMODELS×TESTS\tPASS\tFAIL\tWARN\tERR\tRATE\tJUDGE\tBY\tSTARTED\tTOOK\tEXIT")
	for _, s := range runs {
		shape := fmt.Sprintf("%d×%d", s.Models, s.Tests)
		if s.Repeat > 1 {
			shape += fmt.Sprintf("×%d", s.Repeat)
		}
		counts := []string{fmt.Sprint(s.Pass), fmt.Sprint(s.Fail), fmt.Sprint(s.Warn), fmt.Sprint(s.Error + s.JudgeError)}
		rate, judge := "—", s.Judge
		switch {
		case s.PassRate != nil && s.Pending == 0:
			rate = pct(*s.PassRate)
		case s.Rate != "":
			rate = s.Rate // its bounds, or "—": the one rule of compare.Counts
		}
		if judge == "" {
			judge = "checks"
		}
		switch {
		case s.ScoringMode == qualify.Mode:
			shape, judge = fmt.Sprintf("%d cases", s.Tests), "qualify"
			counts = []string{"—", "—", "—", "—"}
		case s.Problem != "":
			counts, judge = []string{"?", "?", "?", "?"}, "?"
		}
		took := "—"
		if s.DurationMS != nil {
			took = (time.Duration(*s.DurationMS) * time.Millisecond).Round(100 * time.Millisecond).String()
		}
		exit := "—"
		if s.ExitCode != nil {
			exit = fmt.Sprint(*s.ExitCode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, s.Status, shape, strings.Join(counts, "\t"),
			rate, judge, runBy(s), s.StartedAt.Local().Format("2006-01-02 15:04:05"), took+"\t"+exit)
	}
	tw.Flush()
	for _, s := range runs {
		if s.Problem != "" {
			fmt.Fprintf(w, "run %s cannot be read back: %s\n", s.ID, s.Problem)
		}
	}
}
