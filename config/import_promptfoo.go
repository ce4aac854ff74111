package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// A promptfoo config is prompts × tests: each test's vars fill each
// prompt's {{var}} placeholders, and its assert list says how to score the
// answer. pitwall maps it onto Tests as follows:
//
//   - each (test, prompt) pair is one Test; its id is vars.test_id (or
//     vars.id, or the description made into a slug), with "/" and the
//     prompt's id or label (or p1, p2 ...) appended when there are several
//     prompts;
//   - the rendered prompt is the user message, as promptfoo sends it,
//     unless it is a JSON list of chat messages, which becomes Messages;
//   - options.provider.config's tools, tool_choice and response_format are
//     the test's (defaultTest supplies any a test leaves out);
//   - assert types pitwall also has become checks (equals, contains,
//     icontains, regex, starts-with, is-json and their not- forms; is-json
//     with a schema is json-schema; contains-any is a regex; contains-all
//     one check per value; latency is max-latency); llm-rubric,
//     model-graded-closedqa and g-eval become criteria, factuality the
//     reference. Others (javascript, python, similar ...) cannot run here:
//     they are skipped and reported as warnings.
type pfTest struct {
	Description string         `yaml:"description"`
	Vars        map[string]any `yaml:"vars"`
	Assert      []pfAssert     `yaml:"assert"`
	Options     struct {
		Provider yaml.Node `yaml:"provider"` // an id string, or a table with config
	} `yaml:"options"`
	Metadata map[string]any `yaml:"metadata"`
}

type pfAssert struct {
	Type      string   `yaml:"type"`
	Value     any      `yaml:"value"`
	Threshold *float64 `yaml:"threshold"`
}

// pfRequest is the part of a provider config that shapes the request.
type pfRequest struct {
	Tools          []chat.Tool        `json:"tools"`
	ToolChoice     any                `json:"tool_choice"`
	ResponseFormat *rawResponseFormat `json:"response_format"`
}

type pfPrompt struct {
	id   string
	text string
}

var pfVar = regexp.MustCompile(`\{\{\s*([A-Za-z_][\w.]*)\s*\}\}`)

func loadPromptfoo(path string, data []byte) ([]Test, []string, error) {
	var doc struct {
		Prompts     yaml.Node `yaml:"prompts"`
		Tests       yaml.Node `yaml:"tests"`
		DefaultTest *pfTest   `yaml:"defaultTest"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, yamlError(path, err)
	}
	prompts, perr := pfPrompts(path, &doc.Prompts)
	if perr != nil {
		return nil, nil, perr
	}
	if doc.Tests.Kind != yaml.SequenceNode {
		return nil, nil, &Error{File: path, Line: max(doc.Tests.Line, 1), Field: "tests",
			Msg:  "tests must be a list written in this file",
			Hint: "pitwall reads inline promptfoo tests only (not file:// or CSV tests)"}
	}
	def := doc.DefaultTest
	if def == nil {
		def = &pfTest{}
	}
	defReq, err := pfProviderRequest(path, &def.Options.Provider)
	if err != nil {
		return nil, nil, err
	}
	skipped := map[string]int{}
	src := newSource(path)
	var tests []Test
	for i, node := range doc.Tests.Content {
		var pt pfTest
		if err := node.Decode(&pt); err != nil {
			return nil, nil, &Error{File: path, Line: node.Line, Field: indexPath("tests", i),
				Msg: "cannot read test: " + yamlMessage(err), Hint: "a test is a table with vars, assert and options"}
		}
		req, err := pfProviderRequest(path, &pt.Options.Provider)
		if err != nil {
			return nil, nil, err
		}
		vars := map[string]any{}
		for k, v := range def.Vars {
			vars[k] = v
		}
		for k, v := range pt.Vars {
			vars[k] = v
		}
		asserts := append(append([]pfAssert(nil), def.Assert...), pt.Assert...)
		for _, p := range prompts {
			t := pfToTest(pt, vars, p, len(prompts) > 1, i, asserts, skipped)
			pfApplyRequest(&t, req, defReq)
			src.set(indexPath("tests", len(tests)), node.Line)
			t.Source = fmt.Sprintf("%s:%d", path, node.Line)
			tests = append(tests, t)
		}
	}
	var warnings []string
	for _, typ := range sortedKeys(skipped) {
		warnings = append(warnings, fmt.Sprintf("%s: skipped %d %q assertion(s), which pitwall cannot run; the judge still sees any llm-rubric criteria",
			path, skipped[typ], typ))
	}
	if err := validateTests(tests, src).err(); err != nil {
		return nil, warnings, err
	}
	return tests, warnings, nil
}

// pfPrompts reads prompts: one string, or a list of strings or {raw, id,
// label} tables.
func pfPrompts(path string, n *yaml.Node) ([]pfPrompt, error) {
	bad := func(line int, msg string) error {
		return &Error{File: path, Line: max(line, 1), Field: "prompts", Msg: msg,
			Hint: "write prompts inline: a string with {{var}} placeholders, or {raw: ..., label: ...}"}
	}
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	case 0:
		return nil, bad(1, "no prompts")
	default:
		return nil, bad(n.Line, "prompts must be a string or a list")
	}
	var out []pfPrompt
	for i, it := range items {
		p := pfPrompt{id: fmt.Sprintf("p%d", i+1)}
		switch it.Kind {
		case yaml.ScalarNode:
			p.text = it.Value
		case yaml.MappingNode:
			var m struct{ Raw, ID, Label string }
			if err := it.Decode(&m); err != nil {
				return nil, bad(it.Line, "cannot read prompt: "+yamlMessage(err))
			}
			p.text = m.Raw
			if m.ID != "" {
				p.id = m.ID
			} else if m.Label != "" {
				p.id = m.Label
			}
		default:
			return nil, bad(it.Line, "a prompt must be a string or {raw: ...}")
		}
		if strings.HasPrefix(strings.TrimSpace(p.text), "file://") {
			return nil, bad(it.Line, "prompts from files (file://) are not supported")
		}
		if strings.TrimSpace(p.text) == "" {
			return nil, bad(it.Line, "empty prompt")
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, bad(n.Line, "no prompts")
	}
	return out, nil
}

// pfProviderRequest reads tools, tool_choice and response_format from a
// provider's config, when the provider is a table.
func pfProviderRequest(path string, n *yaml.Node) (*pfRequest, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	var p struct {
		Config map[string]any `yaml:"config"`
	}
	if err := n.Decode(&p); err != nil {
		return nil, &Error{File: path, Line: n.Line, Field: "options.provider", Msg: "cannot read provider: " + yamlMessage(err)}
	}
	if p.Config == nil {
		return nil, nil
	}
	b, err := json.Marshal(p.Config)
	if err != nil {
		return nil, &Error{File: path, Line: n.Line, Field: "options.provider.config", Msg: err.Error()}
	}
	var req pfRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, &Error{File: path, Line: n.Line, Field: "options.provider.config",
			Msg: "tools, tool_choice or response_format is not in OpenAI's shape: " + err.Error()}
	}
	return &req, nil
}

// pfApplyRequest sets the request fields from the test's provider config,
// falling back to defaultTest's field by field.
func pfApplyRequest(t *Test, req, def *pfRequest) {
	rt := rawTest{}
	for _, r := range []*pfRequest{def, req} {
		if r == nil {
			continue
		}
		if r.Tools != nil {
			rt.Tools = r.Tools
		}
		if r.ToolChoice != nil {
			rt.ToolChoice = r.ToolChoice
		}
		if r.ResponseFormat != nil {
			rt.ResponseFormat = r.ResponseFormat
		}
	}
	conv := rt.toTest()
	t.Tools, t.ToolChoice, t.ResponseFormat = conv.Tools, conv.ToolChoice, conv.ResponseFormat
}

func pfToTest(pt pfTest, vars map[string]any, p pfPrompt, several bool, i int, asserts []pfAssert, skipped map[string]int) Test {
	t := Test{Name: pt.Description}
	t.ID = firstString(vars["test_id"], vars["id"], pt.Metadata["id"])
	if t.ID == "" {
		t.ID = slug(pt.Description)
	}
	if t.ID == "" {
		t.ID = fmt.Sprintf("test-%d", i+1)
	}
	if several {
		t.ID += "/" + p.id
	}
	t.Category = firstString(vars["category"], pt.Metadata["category"])

	prompt := pfRender(p.text, vars)
	if msgs, ok := chatMessages(prompt); ok {
		t.Messages = msgs
	} else {
		t.User = strings.TrimRight(prompt, "\n")
	}
	var criteria []string
	for _, a := range asserts {
		checks, crit, ref, ok := pfAssertion(a, vars)
		if !ok {
			skipped[a.Type]++
			continue
		}
		t.Checks = append(t.Checks, checks...)
		if crit != "" {
			criteria = append(criteria, crit)
		}
		if ref != "" {
			t.Reference = ref
		}
	}
	t.Criteria = strings.Join(criteria, "\n")
	return t
}

// pfAssertion maps one assertion; ok is false for a type pitwall cannot
// run.
func pfAssertion(a pfAssert, vars map[string]any) (checks []check.Check, criteria, reference string, ok bool) {
	typ := strings.TrimSpace(a.Type)
	base, not := strings.CutPrefix(typ, "not-")
	neg := func(t string) string {
		if not {
			return "not-" + t
		}
		return t
	}
	val := pfRender(valueText(a.Value), vars)
	switch base {
	case "equals", "contains", "icontains", "regex", "starts-with":
		return []check.Check{{Type: typ, Value: val}}, "", "", true
	case "is-json":
		if a.Value == nil {
			return []check.Check{{Type: typ}}, "", "", true
		}
		return []check.Check{{Type: neg("json-schema"), Schema: jsonNormalize(a.Value)}}, "", "", true
	case "contains-any", "icontains-any":
		var alts []string
		for _, s := range valueList(a.Value) {
			alts = append(alts, regexp.QuoteMeta(pfRender(s, vars)))
		}
		if len(alts) == 0 {
			return nil, "", "", false
		}
		re := "(?:" + strings.Join(alts, "|") + ")"
		if base == "icontains-any" {
			re = "(?i)" + re
		}
		return []check.Check{{Type: neg("regex"), Value: re}}, "", "", true
	case "contains-all", "icontains-all":
		if not { // "not all of them" is no conjunction of checks
			return nil, "", "", false
		}
		for _, s := range valueList(a.Value) {
			checks = append(checks, check.Check{Type: strings.TrimSuffix(base, "-all"), Value: pfRender(s, vars)})
		}
		return checks, "", "", len(checks) > 0
	case "latency":
		if not || a.Threshold == nil {
			return nil, "", "", false
		}
		return []check.Check{{Type: "max-latency", Value: fmt.Sprintf("%gms", *a.Threshold)}}, "", "", true
	case "llm-rubric", "model-graded-closedqa", "g-eval":
		if not || val == "" {
			return nil, "", "", false
		}
		return nil, val, "", true
	case "factuality":
		if not || val == "" {
			return nil, "", "", false
		}
		return nil, "", val, true
	}
	return nil, "", "", false
}

// pfRender fills {{var}} placeholders; non-string values are written as
// JSON, unknown names are left as they are.
func pfRender(s string, vars map[string]any) string {
	return pfVar.ReplaceAllStringFunc(s, func(m string) string {
		name := pfVar.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			return m
		}
		return valueText(v)
	})
}

func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(jsonNormalize(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func valueList(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, valueText(e))
		}
		return out
	case string:
		return []string{x}
	}
	return nil
}

// chatMessages reads a rendered prompt that is a JSON list of chat
// messages, as promptfoo allows.
func chatMessages(s string) ([]chat.Message, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var msgs []chat.Message
	if err := json.Unmarshal([]byte(s), &msgs); err != nil || len(msgs) == 0 {
		return nil, false
	}
	for _, m := range msgs {
		if m.Role == "" {
			return nil, false
		}
	}
	return msgs, true
}

func firstString(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlError(path string, err error) *Error {
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		fmt.Sscan(m[1], &line)
	}
	return &Error{File: path, Line: line, Msg: "YAML: " + yamlMessage(err),
		Hint: "check indentation and quoting near this line"}
}

var yamlPrefix = regexp.MustCompile(`^yaml: (line \d+: )?`)

func yamlMessage(err error) string {
	return yamlPrefix.ReplaceAllString(err.Error(), "")
}
