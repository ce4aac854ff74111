package promptprix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// A prompt-prix battery is {"prompts": [...]} (JSON) or one prompt per line
// (JSONL). pitwall takes each prompt as prompt-prix runs it:
//
//   - messages, when present, is the whole conversation, sent as written
//     (prompt-prix prepends nothing to it; user, which prompt-prix always
//     requires, is then not sent); without messages the request is system
//     (prompt-prix's default "You are a helpful assistant." when absent)
//     and user;
//   - mode "react" is an agent test (mode = "agent") with max_iterations
//     (default 15) and mock_tools; like prompt-prix's loop it starts from
//     system and user, so messages are not sent;
//   - response_format is sent; severity is kept, prompt-prix's "warning"
//     when absent; tool_choice validates the reply and is not sent, as in
//     prompt-prix ([run] send_tool_choice = true sends it); expected_response
//     is the reference, followed by the expected block for the judge to read;
//   - a react test without tools, or with mock tools for tools it does not
//     offer, loads, as prompt-prix takes it (config.DialectPromptPrix);
//   - every key of expected that is deterministic becomes a check (see
//     expectedChecks), pass_criteria and fail_criteria the criteria.
//
// Keys prompt-prix does not read either are noted, not refused (prompt-prix
// ignores them too).
type ppPrompt struct {
	ID               string                    `json:"id"`
	Name             string                    `json:"name"`
	Category         string                    `json:"category"`
	Severity         string                    `json:"severity"`
	System           *string                   `json:"system"`
	User             string                    `json:"user"`
	Messages         []config.RawMessage       `json:"messages"`
	Tools            []chat.Tool               `json:"tools"`
	ToolChoice       any                       `json:"tool_choice"`
	ResponseFormat   *config.RawResponseFormat `json:"response_format"`
	Expected         map[string]any            `json:"expected"`
	ExpectedResponse string                    `json:"expected_response"`
	Criteria         string                    `json:"criteria"`
	PassCriteria     string                    `json:"pass_criteria"`
	FailCriteria     string                    `json:"fail_criteria"`
	Mode             string                    `json:"mode"`
	MaxIterations    int                       `json:"max_iterations"`
	MockTools        any                       `json:"mock_tools"`
}

// DefaultSeverity is a prompt-prix test's severity when it gives none
// (its BenchmarkCase's default), so --fail-on warning counts it as there.
const DefaultSeverity = "warning"

// promptPrixSystem is the system prompt prompt-prix sends when a test
// gives none.
const promptPrixSystem = "You are a helpful assistant."

// loadJSON reads {"test_suite": ..., "prompts": [...]}.
func loadJSON(f config.File) ([]config.Test, error) {
	path, data, n := f.Path, f.Data, f.Notes
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, config.JSONDecodeError(path, data, 0, err)
	}
	src, err := config.LocateJSON(path, data, 0, "")
	if err != nil {
		return nil, config.JSONDecodeError(path, data, 0, err)
	}
	col := config.NewCollector(src)
	prompts, ok := top["prompts"].([]any)
	if !ok {
		col.Add("prompts", `write "prompts": [{"id": "...", "user": "..."}, ...]`, "prompts must be an array, got %s", config.Describe(top["prompts"], "json"))
		return nil, col.Errs.Err()
	}
	tests := make([]config.Test, 0, len(prompts))
	for i, raw := range prompts {
		at := config.IndexPath("prompts", i)
		t, ok := promptTest(col, n, raw, at)
		if !ok {
			continue
		}
		t.Source = fmt.Sprintf("%s:%d", path, src.Line(at))
		tests = append(tests, t)
	}
	if len(col.Errs) > 0 {
		return nil, col.Errs.Err()
	}
	return config.FinishTestsAt(tests, src, "prompts", nil, n)
}

// readPrompt reads one prompt of a JSONL battery, or a JSON file's lone
// prompt, as a test.
func readPrompt(r config.Record) (config.Test, bool) {
	return promptTest(r.Col, r.Notes, r.Fields, r.At)
}

// promptTest reads one prompt from its generic decoding (numbers as
// json.Number), reporting problems at the paths under at.
func promptTest(col *config.Collector, n *config.Notes, raw any, at string) (config.Test, bool) {
	before := len(col.Errs)
	config.CheckShapeWith(col, raw, reflect.TypeFor[ppPrompt](), "json", at, func(path, key string) {
		n.Add(fmt.Sprintf("prompt-prix key %q is not read (prompt-prix does not read it either)", key), promptLabel(raw))
	})
	if len(col.Errs) > before {
		return config.Test{}, false
	}
	b, err := json.Marshal(raw)
	var p ppPrompt
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		col.Add(at, "", "cannot read the prompt: %v", config.JSONDecodeError(col.Src.File, b, 0, err).Msg)
		return config.Test{}, false
	}
	t := p.toTest(col, n, at)
	return t, true
}

func promptLabel(raw any) string {
	if m, ok := raw.(map[string]any); ok {
		if id, ok := m["id"].(string); ok {
			return id
		}
	}
	return ""
}

// toTest maps a prompt onto a Test, reporting what cannot be read at the
// paths under at.
func (p ppPrompt) toTest(col *config.Collector, n *config.Notes, at string) config.Test {
	rt := config.RawTest{
		ID: p.ID, Name: p.Name, Category: p.Category, Severity: p.Severity, User: p.User,
		Messages: p.Messages, Tools: p.Tools, ToolChoice: p.ToolChoice, ResponseFormat: p.ResponseFormat,
		Criteria: p.Criteria, PassCriteria: p.PassCriteria, FailCriteria: p.FailCriteria,
		Mode: p.Mode, MaxIterations: p.MaxIterations, MockTools: p.MockTools,
	}
	id := strings.TrimSpace(p.ID)
	system := promptPrixSystem
	if p.System != nil {
		system = *p.System
	}
	switch {
	case config.NormalizeMode(p.Mode) == config.ModeAgent:
		rt.System = system
		if len(p.Messages) > 0 {
			rt.Messages = nil
			n.Add("react test with messages: prompt-prix's loop starts from system and user, and so does pitwall's; the messages are not sent", id)
		}
	case len(p.Messages) > 0:
		if p.System != nil && !opensWithSystem(p.Messages) {
			n.Add("test with messages and system: prompt-prix sends the messages as written, so the system prompt is not sent", id)
		}
	default:
		rt.System = system
	}
	var refs []string
	if s := strings.TrimSpace(p.ExpectedResponse); s != "" {
		refs = append(refs, s)
	}
	if len(p.Expected) > 0 {
		if b, err := json.Marshal(p.Expected); err == nil {
			refs = append(refs, "Expected: "+string(b))
		}
		checks, probs := expectedChecks(p.Expected, n, id)
		for _, pr := range probs {
			col.Add(config.Under(config.JoinPath(at, "expected"), pr.Field), pr.Hint, "test %q: %s", id, pr.Msg)
		}
		rt.Checks = checks
	}
	rt.Reference = strings.Join(refs, "\n\n")
	if strings.TrimSpace(rt.Severity) == "" {
		rt.Severity = DefaultSeverity
	}
	for _, pr := range rt.Problems() {
		col.Add(config.Under(at, pr.Field), pr.Hint, "test %q: %s", id, pr.Msg)
	}
	t := rt.ToTest()
	t.Dialect = config.DialectPromptPrix
	return t
}

func opensWithSystem(msgs []config.RawMessage) bool {
	return len(msgs) > 0 && strings.EqualFold(strings.TrimSpace(msgs[0].Role), "system")
}

// checked validates a check made from a battery's own vocabulary, so that a
// problem is reported at the key it came from rather than at a check the
// file never wrote.
func checked(c check.Check, field, hint string, out *[]check.Check, probs *[]config.Problem) {
	if err := check.ValidateCheck(c); err != nil {
		*probs = append(*probs, config.Problem{Field: field, Hint: hint, Msg: err.Error()})
		return
	}
	*out = append(*out, c)
}
