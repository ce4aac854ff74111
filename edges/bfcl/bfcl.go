package bfcl

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// A BFCL (Berkeley Function Calling Leaderboard) entry is one JSONL line of
// {"id", "question", "function"}, as prompt-prix also reads it:
//
//   - question is the conversation: a list of messages, or BFCL's list of
//     turns, each a list of messages; only the first turn can be sent as
//     one request (a later turn follows the model's reply), which is noted;
//   - function is the tools, BFCL's bare {name, description, parameters}
//     or OpenAI's {type, function}; BFCL's parameter types are translated
//     as BFCL does for OpenAI models (dict → object, float → number,
//     tuple → array, any → no type);
//   - metadata.category and metadata.severity are kept; without a category
//     the id's stem is one (simple_12 → simple);
//   - ground_truth, when the line carries it (BFCL keeps it in a separate
//     possible-answer file), becomes checks as BFCL's checker reads it: the
//     number of calls, a call to each function, and each argument whose
//     list of acceptable values has no "" (which marks it optional) holding
//     one of them.
var bfclKeys = []string{"id", "question", "function", "metadata", "ground_truth"}

var bfclStem = regexp.MustCompile(`^(.*?)_\d+(?:[-_]\d+)*$`)

// readEntry reads one entry as a test.
func readEntry(r config.Record) (config.Test, bool) {
	col, n, m, at := r.Col, r.Notes, r.Fields, r.At
	t := config.Test{ID: r.ID}
	switch id := m["id"].(type) {
	case string:
		if strings.TrimSpace(id) != "" {
			t.ID = strings.TrimSpace(id)
		}
	case json.Number:
		t.ID = id.String()
	}
	before := len(col.Errs)
	msgs := bfclQuestion(col, n, m["question"], t.ID, config.JoinPath(at, "question"))
	switch {
	case len(msgs) == 1 && msgs[0].Role == "user":
		t.User = msgs[0].Content
	case len(msgs) == 2 && msgs[0].Role == "system" && msgs[1].Role == "user":
		t.System, t.User = msgs[0].Content, msgs[1].Content
	default:
		t.Messages = msgs
	}
	t.Tools = bfclTools(col, m["function"], t.ID, config.JoinPath(at, "function"))
	if meta, ok := m["metadata"].(map[string]any); ok {
		t.Category, _ = meta["category"].(string)
		if sev, ok := meta["severity"].(string); ok {
			t.Severity = strings.ToLower(strings.TrimSpace(sev))
		}
	}
	if t.Category == "" {
		if sm := bfclStem.FindStringSubmatch(t.ID); sm != nil {
			t.Category = sm[1]
		}
	}
	pp := isPromptPrix(m)
	if pp {
		t.Dialect = config.DialectPromptPrix
		if t.Severity == "" {
			t.Severity = "warning" // prompt-prix's default
		}
		if tc, ok := m["tool_choice"]; ok {
			_, t.ToolChoice, _ = config.Request(nil, config.JSONNormalize(tc), nil)
		}
		checks, probs := promptPrixChecks(m)
		t.Checks = checks
		for _, p := range probs {
			col.Add(config.Under(at, p.Field), p.Hint, "test %q: %s", t.ID, p.Msg)
		}
	} else if gt, ok := m["ground_truth"]; ok {
		checks, probs := bfclGroundTruth(config.JSONNormalize(gt))
		t.Checks = checks
		for _, p := range probs {
			col.Add(config.Under(config.JoinPath(at, "ground_truth"), p.Field), p.Hint, "test %q: %s", t.ID, p.Msg)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(bfclKeys, k) && !(pp && slices.Contains(promptPrixKeys, k)) {
			n.Add(fmt.Sprintf("BFCL key %q is not read", k), t.ID)
		}
	}
	return t, len(col.Errs) == before
}

// bfclQuestion reads question: messages, or turns of messages.
func bfclQuestion(col *config.Collector, n *config.Notes, q any, id, at string) []chat.Message {
	list, ok := config.JSONNormalize(q).([]any)
	if !ok || len(list) == 0 {
		col.Add(at, `write "question": [{"role": "user", "content": "..."}]`, "test %q: question must be a list of messages", id)
		return nil
	}
	if turns, nested := list[0].([]any); nested {
		if len(list) > 1 {
			n.Add("BFCL multi-turn question: only its first turn is sent, since each later turn follows the model's reply", id)
		}
		list = turns
	}
	msgs, probs, ok := config.DecodeMessages(list)
	if !ok {
		col.Add(at, `each message is {"role": "user", "content": "..."}`, "test %q: question holds something that is not a message", id)
		return nil
	}
	for _, p := range probs {
		col.Add(config.Under(at, strings.TrimPrefix(p.Field, "messages")), p.Hint, "test %q: %s", id, p.Msg)
	}
	return msgs
}

// bfclTools reads function: one function or a list, in BFCL's shape or
// OpenAI's.
func bfclTools(col *config.Collector, f any, id, at string) []chat.Tool {
	v := config.JSONNormalize(f)
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var tools []chat.Tool
	for i, e := range list {
		fn, ok := e.(map[string]any)
		if inner, wrapped := fn["function"].(map[string]any); wrapped {
			fn = inner
		}
		name, _ := fn["name"].(string)
		if !ok || strings.TrimSpace(name) == "" {
			col.Add(config.IndexPath(at, i), `each function is {"name", "description", "parameters"}`, "test %q: function has no name", id)
			continue
		}
		desc, _ := fn["description"].(string)
		tools = append(tools, chat.Tool{Type: "function", Function: chat.FunctionDef{
			Name: name, Description: desc, Parameters: bfclSchema(fn["parameters"]),
		}})
	}
	return tools
}

// bfclTypes maps BFCL's parameter types onto JSON Schema's.
var bfclTypes = map[string]string{"dict": "object", "float": "number", "tuple": "array"}

// bfclSchema translates a BFCL parameters schema for OpenAI-compatible
// servers; it copies what it changes.
func bfclSchema(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = bfclSchema(val)
		}
		if t, ok := x["type"].(string); ok {
			switch {
			case t == "any":
				delete(out, "type")
			case bfclTypes[t] != "":
				out["type"] = bfclTypes[t]
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = bfclSchema(e)
		}
		return out
	}
	return v
}

// bfclGroundTruth reads [{"func": {"param": [acceptable values]}}, ...].
func bfclGroundTruth(gt any) ([]check.Check, []config.Problem) {
	list, ok := gt.([]any)
	if !ok {
		return nil, []config.Problem{{Hint: `write "ground_truth": [{"func": {"arg": ["acceptable", "values"]}}]`, Msg: "ground_truth must be a list of calls"}}
	}
	var out []check.Check
	var probs []config.Problem
	checked(check.Check{Type: "tool-call-count", Value: fmt.Sprint(len(list))}, "", "", &out, &probs)
	for i, e := range list {
		call, ok := e.(map[string]any)
		if !ok || len(call) != 1 {
			probs = append(probs, config.Problem{Field: config.IndexPath("", i), Hint: `each entry is {"func": {"arg": [values]}}`, Msg: "a ground-truth entry must name one function"})
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(call)) {
			params, _ := call[name].(map[string]any)
			checked(check.Check{Type: "tool-call", Name: name}, config.IndexPath("", i), "", &out, &probs)
			required := map[string]any{}
			for _, p := range slices.Sorted(maps.Keys(params)) {
				values, ok := params[p].([]any)
				if !ok || len(values) == 0 || slices.Contains(values, any("")) {
					continue // optional, or no list to hold it to
				}
				required[p] = values
			}
			if len(required) > 0 {
				checked(check.Check{Type: "tool-args-enum", Name: name, Args: required}, config.IndexPath("", i), "", &out, &probs)
			}
		}
	}
	return out, probs
}

// checked validates a check made from BFCL's ground truth, so that a
// problem is reported at the entry it came from rather than at a check
// the file never wrote.
func checked(c check.Check, field, hint string, out *[]check.Check, probs *[]config.Problem) {
	if err := check.ValidateCheck(c); err != nil {
		*probs = append(*probs, config.Problem{Field: field, Hint: hint, Msg: err.Error()})
		return
	}
	*out = append(*out, c)
}
