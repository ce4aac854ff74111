package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ModeAgent is Test.Mode for a tool loop; prompt-prix writes it "react".
const ModeAgent = "agent"

// DialectPromptPrix is Test.Dialect for a test read from a prompt-prix
// battery.
const DialectPromptPrix = "prompt-prix"

// SendsToolChoice reports whether the test's tool_choice goes on the wire.
// prompt-prix never sends a battery's tool_choice (it only validates the
// reply against it), so a prompt-prix test does not either unless the run
// says send_tool_choice = true; send_tool_choice = false keeps any test's
// off the wire, leaving it to validation.
func (t Test) SendsToolChoice(run Run) bool {
	if run.SendToolChoice != nil {
		return *run.SendToolChoice
	}
	return t.Dialect != DialectPromptPrix
}

// DefaultMaxIterations is an agent test's MaxIterations when the battery
// gives none (prompt-prix's default).
const DefaultMaxIterations = 15

// MockTools answers an agent test's tool calls, in prompt-prix's format: a
// map from tool name to a map from a key to the observation. A key is one
// of the call's argument values ("config.json" for read_file(path =
// "config.json")), the call's whole arguments as JSON, or "_default".
type MockTools map[string]map[string]string

// NoMockPrefix starts the observation of a call that no mock answers; the
// runner counts such a step as an invalid call.
const NoMockPrefix = "Error: "

// Observe returns the observation for a call to name with arguments (the
// JSON text the model sent), looked up as prompt-prix does:
//
//  1. the whole arguments: a key that is a JSON object equal to them;
//  2. an argument's value: a key equal to one of the values as Python's
//     str() writes it, since prompt-prix's keys are written that way
//     (strings as they are, True, None, 2.0, ['a', 'b'], {'k': 1}), or, for
//     numbers and booleans, as JSON writes them; arguments taken in the
//     order the model wrote them;
//  3. "_default".
//
// Arguments that are not a JSON object match only "_default" (prompt-prix
// answers such a call with a parse error; that is the loop's to say). ok is
// false when nothing matches; the observation then says so, starting with
// NoMockPrefix, as prompt-prix's does.
func (m MockTools) Observe(name, arguments string) (observation string, ok bool) {
	mocks := m[name]
	args, order, raw := decodeArgs(arguments)
	if len(mocks) > 0 && args != nil {
		for _, key := range sortedKeys(mocks) {
			if strings.HasPrefix(strings.TrimSpace(key), "{") {
				var want map[string]any
				if json.Unmarshal([]byte(key), &want) == nil && jsonEqual(want, args) {
					return mocks[key], true
				}
			}
		}
		for _, k := range order {
			for _, s := range argKeys(raw[k], args[k]) {
				if obs, ok := mocks[s]; ok {
					return obs, true
				}
			}
		}
	}
	if obs, ok := mocks["_default"]; ok {
		return obs, true
	}
	return fmt.Sprintf("%sNo mock response for %s(%s)", NoMockPrefix, name, strings.TrimSpace(arguments)), false
}

// decodeArgs decodes a call's arguments and lists their keys in the order
// written, with each value's JSON text; nil when they are not a JSON object.
func decodeArgs(arguments string) (map[string]any, []string, map[string]json.RawMessage) {
	if strings.TrimSpace(arguments) == "" {
		return map[string]any{}, nil, nil
	}
	var args map[string]any
	if json.Unmarshal([]byte(arguments), &args) != nil {
		return nil, nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(arguments))
	var order []string
	raw := map[string]json.RawMessage{}
	if _, err := dec.Token(); err != nil {
		return args, nil, raw
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		order = append(order, k)
		raw[k] = v
	}
	return args, order, raw
}

// argKeys are the mock keys an argument's value matches: Python's str() of
// it, as prompt-prix looks it up, and for a number or a boolean its JSON
// text too (pitwall's own batteries write true and 2).
func argKeys(raw json.RawMessage, v any) []string {
	var keys []string
	if s, ok := PyStr(raw); ok {
		keys = append(keys, s)
	}
	if s, ok := scalarText(v); ok && (len(keys) == 0 || keys[0] != s) {
		keys = append(keys, s)
	}
	return keys
}

// scalarText writes an argument value as a mock key would: strings as they
// are, numbers and booleans as JSON does (and Python's True/False are not
// matched).
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10), true
		}
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// mockTools reads a battery's mock_tools: tool name → key → observation.
// An observation that is not a string (a JSON object, a number) is kept as
// its JSON text, which is what the model would be shown.
func mockTools(v any) (MockTools, string) {
	if v == nil {
		return nil, ""
	}
	top, ok := JSONNormalize(v).(map[string]any)
	if !ok {
		return nil, "mock_tools must map each tool's name to its answers"
	}
	out := MockTools{}
	for _, tool := range sortedKeys(top) {
		answers, ok := top[tool].(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("mock_tools.%s must map argument values (or \"_default\") to observations", tool)
		}
		out[tool] = map[string]string{}
		for _, key := range sortedKeys(answers) {
			switch obs := answers[key].(type) {
			case string:
				out[tool][key] = obs
			default:
				out[tool][key] = ValueText(obs)
			}
		}
	}
	return out, ""
}

// NormalizeMode folds the spellings of a test's mode: prompt-prix's
// "react" is pitwall's "agent", and "single" or "" is one request.
func NormalizeMode(m string) string {
	switch s := strings.ToLower(strings.TrimSpace(m)); s {
	case "react", ModeAgent:
		return ModeAgent
	case "", "single", "single-shot", "none":
		return ""
	default:
		return s
	}
}

func ValueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(JSONNormalize(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
