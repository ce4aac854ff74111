package history

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"pitwall/runner/compare"
)

// The JUnit XML shape CI systems read (Jenkins, GitLab, GitHub actions'
// test reporters): testsuites > testsuite > testcase > failure | error |
// skipped.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	// Properties are the test's category and severity, when its battery
	// gives them.
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitProblem   `xml:"failure,omitempty"`
	Error      *junitProblem   `xml:"error,omitempty"`
	Skipped    *junitSkipped   `xml:"skipped,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// writeJUnit writes one testsuite per model (per run and model when there
// are several runs) and one testcase per test and repeat. A FAIL verdict
// or a failed check is a <failure>; a server error or a judge error is an
// <error>; a cancelled, unrun or unjudged cell is <skipped>. WARN passes,
// as it does for pitwall's exit code without --strict, and says so in
// system-out. Characters XML 1.0 cannot hold (control characters in a
// model's output) come out as U+FFFD: encoding/xml replaces them.
func writeJUnit(w io.Writer, xs []*Export) error {
	root := junitSuites{Name: "pitwall"}
	var total float64
	for _, x := range xs {
		root.Name = "pitwall " + x.Run.Name
		if len(xs) > 1 {
			root.Name = "pitwall"
		}
		g := gridOf(x)
		for _, m := range x.Models {
			s := junitSuite{Name: m, Properties: []junitProperty{{"run", x.Run.ID}, {"judge", x.Judge}}}
			if len(xs) > 1 {
				s.Name = x.Run.ID + "/" + m
			}
			if !x.Run.StartedAt.IsZero() {
				s.Timestamp = x.Run.StartedAt.UTC().Format("2006-01-02T15:04:05")
			}
			var secs float64
			for _, t := range x.Tests {
				reps := g.at(t, m)
				for _, c := range reps {
					tc := junitTestcase(x, c, len(reps) > 1)
					s.Tests++
					switch {
					case tc.Failure != nil:
						s.Failures++
					case tc.Error != nil:
						s.Errors++
					case tc.Skipped != nil:
						s.Skipped++
					}
					secs += float64(c.LatencyMS) / 1000
					s.Cases = append(s.Cases, tc)
				}
			}
			s.Time = seconds(secs)
			total += secs
			root.Tests += s.Tests
			root.Failures += s.Failures
			root.Errors += s.Errors
			root.Skipped += s.Skipped
			root.Suites = append(root.Suites, s)
		}
	}
	root.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitTestcase(x *Export, c *ExportCell, repeats bool) junitCase {
	tc := junitCase{Name: c.Test, Classname: "pitwall." + c.Model, Time: seconds(float64(c.LatencyMS) / 1000)}
	if repeats {
		tc.Name = fmt.Sprintf("%s #%d", c.Test, c.Repeat+1)
	}
	if c.Category != "" {
		tc.Properties = append(tc.Properties, junitProperty{"category", c.Category})
	}
	if c.Severity != "" {
		tc.Properties = append(tc.Properties, junitProperty{"severity", c.Severity})
	}
	detail := func() string {
		var b strings.Builder
		if r := why(c); r != "" {
			b.WriteString(r + "\n\n")
		}
		if c.Output != "" {
			b.WriteString("output:\n" + c.Output + "\n")
		}
		if len(c.ToolCalls) > 0 {
			b.WriteString("tool calls: " + string(c.ToolCalls) + "\n")
		}
		return b.String()
	}
	switch outcome(c) {
	case compare.Fail:
		typ := "verdict"
		if c.Status == "failed" {
			typ = "check"
		}
		tc.Failure = &junitProblem{Message: clip(oneLine(why(c)), 200), Type: typ, Text: detail()}
		if tc.Failure.Message == "" {
			tc.Failure.Message = "FAIL"
		}
	case compare.Error:
		tc.Error = &junitProblem{Message: clip(oneLine(c.Error), 200), Type: c.ErrorClass, Text: detail()}
	case compare.JudgeError:
		tc.Error = &junitProblem{Message: clip(oneLine("judge error: "+judgeReason(c)), 200), Type: "judge", Text: detail()}
	case compare.Warn:
		tc.SystemOut = "WARN (" + x.Judge + "): " + judgeReason(c) + "\n\n" + c.Output
	case compare.None, compare.Unjudged, compare.Unfinished:
		msg := c.Status
		if c.Status == "completed" {
			msg = "not judged by " + x.Judge
		}
		tc.Skipped = &junitSkipped{Message: msg}
	case compare.Pass:
		// A passing agent cell's loop is what a CI log would want to see
		// how it passed; a failing one carries its calls in the failure.
		tc.SystemOut = stepsText(c.Steps)
	}
	return tc
}

// stepsText is an agent cell's trajectory as plain text, one step a
// paragraph: what the model said, each call and its observation.
func stepsText(steps []ExportStep) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "step %d:\n", s.Step)
		if t := strings.TrimSpace(s.Content); t != "" {
			b.WriteString(t + "\n")
		}
		for _, c := range s.Calls {
			obs := "(no observation)"
			if c.Observation != nil {
				obs = *c.Observation
			}
			fmt.Fprintf(&b, "call %s %s\n-> %s\n", c.Name, c.Arguments, obs)
		}
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
