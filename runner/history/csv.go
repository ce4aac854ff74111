package history

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"

	"pitwall/judge/scoring"
)

// csvHeader names the CSV export's columns. repeat counts from 0, as in
// the JSON export.
var csvHeader = []string{
	"run", "model", "test", "category", "severity", "repeat", "status", "judge", "in_view", "verdict", "score",
	"latency_ms", "ttft_ms", "tokens_per_sec", "prompt_tokens", "completion_tokens", "attempts",
	"server", "error_class", "error", "reason", "output", "tool_calls", "checks",
}

// writeCSV writes one row per cell (RFC 4180: CRLF line ends, quotes
// where a field holds a comma, a quote or a line break). A run with two or
// more judges gets one row per cell and judge (the jury's aggregate
// included), with in_view marking the judge the run's figures use; a cell
// no judge saw (failed checks, an error) keeps one row with no judge.
func writeCSV(w io.Writer, xs []*Export) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, x := range xs {
		several := len(x.Judges) >= 2
		for i := range x.Cells {
			c := &x.Cells[i]
			if !several || len(c.Judgments) == 0 {
				judge := x.Judge
				if several {
					judge = ""
				}
				if err := cw.Write(csvRow(x, c, judge, true, c.Verdict, c.Score)); err != nil {
					return err
				}
				continue
			}
			for _, name := range judgeOrder(x, c) {
				v := c.Judgments[name]
				verdict, score := &v.Verdict, &v.Score
				if c.Status == "failed" { // the checks decided before any judge
					verdict, score = c.Verdict, c.Score
				}
				if err := cw.Write(csvRow(x, c, name, name == x.Judge, verdict, score)); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// judgeOrder lists the judges of a cell in the run's order, the jury last.
func judgeOrder(x *Export, c *ExportCell) []string {
	var out []string
	for _, j := range x.Judges {
		if _, ok := c.Judgments[j]; ok {
			out = append(out, j)
		}
	}
	for _, j := range sortedKeys(c.Judgments) {
		if j != scoring.JuryName && !slices.Contains(out, j) {
			out = append(out, j)
		}
	}
	if _, ok := c.Judgments[scoring.JuryName]; ok {
		out = append(out, scoring.JuryName)
	}
	return out
}

func csvRow(x *Export, c *ExportCell, judge string, inView bool, verdict *string, score *float64) []string {
	v, s := "", ""
	if verdict != nil {
		v = *verdict
	}
	if score != nil {
		s = strconv.FormatFloat(*score, 'f', -1, 64)
	}
	tps := "" // no decode measured
	if c.TokensPerSec != nil {
		tps = strconv.FormatFloat(*c.TokensPerSec, 'f', 1, 64)
	}
	return []string{
		x.Run.ID, c.Model, c.Test, c.Category, c.Severity, strconv.Itoa(c.Repeat), c.Status, judge, strconv.FormatBool(inView), v, s,
		strconv.FormatInt(c.LatencyMS, 10), strconv.FormatInt(c.TTFTMS, 10),
		tps, strconv.Itoa(c.PromptTokens),
		strconv.Itoa(c.CompletionTokens), strconv.Itoa(c.Attempts),
		c.Server, c.ErrorClass, c.Error, why(c), c.Output, string(c.ToolCalls), string(c.Checks),
	}
}
