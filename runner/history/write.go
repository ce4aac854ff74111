package history

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"pitwall/runner/compare"
	"pitwall/runner/ledger"
)

// Export formats.
const (
	FormatJSON     = "json"
	FormatCSV      = "csv"
	FormatMarkdown = "md"
	FormatHTML     = "html"
	FormatJUnit    = "junit"
	FormatText     = "text" // the comparison's plain tables, for a terminal
)

// Formats lists the export formats, in the order help text gives them.
func Formats() []string {
	return []string{FormatJSON, FormatCSV, FormatMarkdown, FormatHTML, FormatJUnit, FormatText}
}

// formatAliases are the other names a format answers to.
var formatAliases = map[string]string{
	"": FormatJSON, "markdown": FormatMarkdown, "htm": FormatHTML, "xml": FormatJUnit, "txt": FormatText,
}

// ParseFormat checks a format name, accepting its aliases (markdown, xml…).
func ParseFormat(name string) (string, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := formatAliases[name]; ok {
		return a, nil
	}
	for _, f := range Formats() {
		if name == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("export format %q is unknown: use one of %s", name, strings.Join(Formats(), ", "))
}

// Extension is the file extension (without its dot) of a format: the one
// FormatFromPath reads back as that format.
func Extension(format string) string {
	switch format {
	case FormatJUnit:
		return "xml"
	case FormatText:
		return "txt"
	}
	return format
}

// FormatFromPath is the format a file name asks for by its extension:
// .json, .csv, .md/.markdown, .html/.htm, .xml (JUnit), .txt.
func FormatFromPath(path string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		return "", fmt.Errorf("%s: no extension to take the export format from: name it .json, .csv, .md, .html or .xml, or give --format", path)
	}
	f, err := ParseFormat(ext)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Exports reads runs from the ledger (ids as ledger.Run takes them: an id,
// a unique prefix, or "last"), each with judge's verdicts ("" for each
// run's own), and compares them with opts (the zero value ranks by pass
// rate with 95% intervals).
func Exports(led *ledger.Ledger, ids []string, judge string, opts compare.Options) ([]*Export, *compare.Report, error) {
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("export: no run given (a run id, a prefix of one, or \"last\")")
	}
	xs := make([]*Export, 0, len(ids))
	runs := make([]compare.Run, 0, len(ids))
	for _, id := range ids {
		x, err := BuildExport(led, id, judge)
		if err != nil {
			return nil, nil, err
		}
		xs = append(xs, x)
		runs = append(runs, x.CompareRun())
	}
	rep, err := compare.Runs(opts, runs...)
	if err != nil {
		return nil, nil, err
	}
	return xs, rep, nil
}

// Compare reads runs from the ledger and compares them (see Exports);
// Report.WriteText prints the result for a terminal.
func Compare(led *ledger.Ledger, ids []string, judge string, opts compare.Options) (*compare.Report, error) {
	_, rep, err := Exports(led, ids, judge, opts)
	return rep, err
}

// Write writes runs from the ledger in a format (ParseFormat's names), with
// judge's verdicts ("" for each run's own judge). One run gives that run's
// report; several give each run and their comparison (each later run
// against the first). Nothing is written when a run cannot be read.
//
//	json   one run: the Export object, its comparison under "comparison";
//	       several: {"runs": [Export...], "comparison": {...}}
//	csv    one row per cell, and per judge when a run has several
//	md     the ranking with intervals, the summary and the grid, for a pull request
//	html   one self-contained page: the grid, filters, each cell on click
//	junit  a testsuite per model, a testcase per test and repeat
//	text   the comparison as plain tables
func Write(w io.Writer, led *ledger.Ledger, ids []string, format, judge string) error {
	f, err := ParseFormat(format)
	if err != nil {
		return err
	}
	xs, rep, err := Exports(led, ids, judge, compare.Options{})
	if err != nil {
		return err
	}
	return Render(w, f, xs, rep)
}

// Render writes exports already read, and their comparison, in a format.
func Render(w io.Writer, format string, xs []*Export, rep *compare.Report) error {
	f, err := ParseFormat(format)
	if err != nil {
		return err
	}
	switch f {
	case FormatJSON:
		return writeJSON(w, xs, rep)
	case FormatCSV:
		return writeCSV(w, xs)
	case FormatMarkdown:
		return writeMarkdown(w, xs, rep)
	case FormatHTML:
		return writeHTML(w, xs, rep)
	case FormatJUnit:
		return writeJUnit(w, xs)
	}
	return rep.WriteText(w)
}

func writeJSON(w io.Writer, xs []*Export, rep *compare.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(xs) == 1 {
		x := *xs[0]
		x.Comparison = rep
		return enc.Encode(&x)
	}
	return enc.Encode(struct {
		Runs       []*Export       `json:"runs"`
		Comparison *compare.Report `json:"comparison"`
	}{xs, rep})
}
