package importrun

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pitwall/config"
)

// Parse reads a finished run from data, telling its kind from the content:
//
//  1. an object with "aggregates" is prompt-prix's consistency export;
//  2. one whose "results" are objects with test_id and model_id, or that
//     lists "models" beside "results" and string "tests", is prompt-prix's
//     results export;
//  3. one with "evalId", or whose "results" is an object holding a
//     "results" array (promptfoo's summary), is promptfoo's eval output,
//     and so is an older output whose top is that summary itself;
//  4. one with an "eval" object beside "samples", "results" or "stats" is
//     an inspect eval log.
//
// These are config's rules for telling a results file from a battery
// (config/sniff.go), so a file `pitwall validate` calls a results export
// is one Parse reads. Anything else is refused with a message that says
// what the file looks like, when it can.
func Parse(data []byte) (*Source, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the file is empty")
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return nil, errors.New("this is an inspect .eval log (a zip archive): write it as JSON with " +
			"`inspect log convert FILE --to json --output-dir DIR` and import the .json file")
	}
	// The decoder recurses and allocates per level: the cap every input
	// has comes first. Its error names the line; Import adds the file.
	var deep *config.Error
	if errors.As(config.CheckNesting("", data, "json"), &deep) {
		return nil, fmt.Errorf("line %d: %s (%s)", deep.Line, deep.Msg, deep.Hint)
	}
	if why := csvResults(data); why != "" {
		return nil, errors.New(why)
	}
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(notAResultsFile("its JSON is " + jsonKind(v) + ", not an object"))
	}
	o := obj{m: top}
	results, _ := top["results"].([]any)
	resultsObj, _ := top["results"].(map[string]any)
	_, promptfooSummary := resultsObj["results"].([]any)
	evalObj, _ := top["eval"].(map[string]any)
	switch {
	case o.has("aggregates"):
		return readConsistency(o)
	case len(results) > 0 && recordHas(results[0], "test_id", "model_id"),
		o.has("results") && o.has("models") && (allStrings(top["tests"]) || isEmptyList(top["tests"])):
		return readPromptPrix(o)
	case o.has("evalId") || promptfooSummary,
		len(results) > 0 && recordHas(results[0], "testIdx", "promptIdx") && (o.has("table") || o.has("stats")):
		return readPromptfoo(o)
	case evalObj != nil && (o.has("samples") || o.has("results") || o.has("stats")):
		return readInspect(o)
	case o.has("run") && o.has("cells"):
		// Before the battery case: an export lists its tests too.
		return nil, errors.New(pitwallExport)
	case o.has("prompts") || o.has("tests"):
		return nil, errors.New("this looks like a battery, not a finished run: give it as --battery, " +
			"or run it with `pitwall run`")
	}
	return nil, errors.New(notAResultsFile("it has " + keyList(top)))
}

const pitwallExport = "this is a pitwall export, not another tool's results: its run is in the ledger it came from; " +
	"use `pitwall show RUN` or `pitwall export RUN` there (with --db if the ledger is elsewhere)"

// csvResults names a CSV file of results for what it is: pitwall's CSV
// export, or another tool's results table; "" for anything else. Only
// JSON results import, and a CSV would otherwise be called not JSON.
func csvResults(data []byte) string {
	head, _, _ := bytes.Cut(data, []byte("\n"))
	line := strings.ToLower(strings.TrimSpace(string(head)))
	if strings.HasPrefix(line, "{") || strings.HasPrefix(line, "[") || strings.Count(line, ",") < 2 {
		return ""
	}
	cols := strings.Split(line, ",")
	for i := range cols {
		cols[i] = strings.Trim(strings.TrimSpace(cols[i]), `"`)
	}
	if slices.Equal(cols[:min(3, len(cols))], []string{"run", "model", "test"}) {
		return "this is a pitwall CSV export, not another tool's results: its run is in the ledger it came from; " +
			"use `pitwall show RUN` or `pitwall export RUN` there"
	}
	if slices.ContainsFunc(cols, func(c string) bool {
		return strings.Contains(c, "model") || strings.Contains(c, "test") || strings.Contains(c, "pass")
	}) {
		return "this is a results CSV: pitwall imports results as JSON (prompt-prix's JSON export, " +
			"`promptfoo eval -o results.json`, or an inspect eval log written as JSON)"
	}
	return ""
}

func notAResultsFile(why string) string {
	return "not a finished run pitwall can import (" + why + "): pitwall imports a prompt-prix results or " +
		"consistency export, the JSON of `promptfoo eval -o results.json`, or an inspect eval log written as JSON"
}

func recordHas(v any, keys ...string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

func allStrings(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, e := range list {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

func isEmptyList(v any) bool {
	list, ok := v.([]any)
	return ok && len(list) == 0
}

// keyList names an object's keys for a message: the keys a, b and c.
func keyList(m map[string]any) string {
	if len(m) == 0 {
		return "no keys"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 6 {
		keys = append(keys[:6], "…")
	}
	return "the keys " + strings.Join(keys, ", ")
}
