package config

import (
	"cmp"
	"fmt"
	"pitwall/internal/textutil"
	"slices"
	"strings"
)

// Errors is every problem found in one load, in file and line order. Load
// returns all of them at once so a user fixes a config in one pass instead of
// one error per run.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find the first *Error inside.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// err returns es as an error, or nil when it is empty, sorted so that the
// messages read top to bottom through each file.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return es
}

// Collector gathers errors for one file, looking up each field's line in the
// file's source map.
type Collector struct {
	Src  *Source
	Errs Errors
}

func NewCollector(src *Source) *Collector { return &Collector{Src: src} }

// add records a problem at field (a dotted path such as servers[1].slots).
func (c *Collector) Add(field, hint, format string, args ...any) {
	c.Errs = append(c.Errs, &Error{
		File:  c.Src.File,
		Line:  c.Src.Line(field),
		Field: field,
		Msg:   fmt.Sprintf(format, args...),
		Hint:  hint,
	})
}

// addAt records a problem at an explicit line (formats whose fields have no
// Source map, such as one JSONL line).
func (c *Collector) AddAt(line int, field, hint, format string, args ...any) {
	c.Errs = append(c.Errs, &Error{
		File:  c.Src.File,
		Line:  line,
		Field: field,
		Msg:   fmt.Sprintf(format, args...),
		Hint:  hint,
	})
}

// nearest returns the candidate closest to s by edit distance, or "" when
// none is close enough to be a plausible typo.
func nearest(s string, candidates []string) string {
	return textutil.Nearest(s, candidates, max(2, len(s)/3))
}

// DidYouMean is a hint naming the nearest candidate, or listing them all
// when none is near.
func DidYouMean(s string, candidates []string) string {
	if n := nearest(s, candidates); n != "" {
		return fmt.Sprintf("did you mean `%s`?", n)
	}
	if len(candidates) == 0 {
		return ""
	}
	return "valid: " + strings.Join(candidates, ", ")
}
