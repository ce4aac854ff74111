package promptfoo

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pitwall/config"
	"pitwall/gpu/chat"
)

// A promptfoo config is prompts × tests: each test's vars fill each
// prompt's {{var}} placeholders, and its assert list says how to score the
// answer. pitwall maps it onto Tests as follows:
//
//   - each (test, prompt) pair is one Test; its id is metadata.test_id
//     (or vars.test_id, vars.id, metadata.id, or the description made into a
//     slug, made unique with -2, -3 …), with "/" and the prompt's id or
//     label (or p1, p2 …) appended when there are several prompts;
//   - a var whose value is a list makes one test per value, as promptfoo
//     runs it (#1, #2 … appended to the id);
//   - the rendered prompt is the user message, as promptfoo sends it,
//     unless it is a JSON list of chat messages, which becomes Messages;
//     prompts may be read from file:// text or JSON files beside the config;
//   - tools, tool_choice and response_format come from the provider's
//     config: the test's own provider (or defaultTest's) when it has one,
//     as promptfoo runs the test on it, else the config's one provider (or
//     its first, noted). options.provider is promptfoo's grader, and its
//     tools are not offered, as promptfoo does not send them; except in
//     prompt-prix's batteries (promptPrixShape), which put the model's
//     tools there: pitwall offers them and warns;
//   - vars.category and metadata.category are the category, severity
//     likewise; vars.expected_verdict (or vars.expect) is Expect, the
//     verdict a judge-like reply must give; vars.expected_response is the
//     reference unless a factuality assertion gives one;
//   - assertions become checks, criteria or the reference (see
//     pfAssertion); what cannot be mapped is noted once per kind;
//   - a {$ref: "#/pointer"} anywhere (assertionTemplates) is what it names
//     in the file, as promptfoo dereferences its config (ref.go).
type pfTest struct {
	Description string         `json:"description"`
	Vars        any            `json:"vars"`
	Assert      []pfAssert     `json:"assert"`
	Options     pfOptions      `json:"options"`
	Metadata    map[string]any `json:"metadata"`
	Threshold   *float64       `json:"threshold"`
	// Provider is the provider promptfoo runs this test on, in place of
	// each of the config's: an id, or a table with an id and config.
	Provider any `json:"provider"`
}

type pfOptions struct {
	// Provider is promptfoo's grader for the test's model-graded
	// assertions, not the model under test: its config's tools are not
	// offered to the model (see pfBase.optionsProvider).
	Provider    any `json:"provider"`
	Transform   any `json:"transform"`
	Postprocess any `json:"postprocess"`
	Prefix      any `json:"prefix"`
	Suffix      any `json:"suffix"`
}

type pfAssert struct {
	Type      string         `json:"type"`
	Value     any            `json:"value"`
	Threshold *float64       `json:"threshold"`
	Weight    *float64       `json:"weight"`
	Metric    string         `json:"metric"`
	Transform any            `json:"transform"`
	Config    map[string]any `json:"config"`
	Provider  any            `json:"provider"`
	Assert    []pfAssert     `json:"assert"` // an assert-set's members
}

// pfRequest is the part of a provider config that shapes the request.
type pfRequest struct {
	Tools          []chat.Tool               `json:"tools"`
	ToolChoice     any                       `json:"tool_choice"`
	ResponseFormat *config.RawResponseFormat `json:"response_format"`
}

type pfPrompt struct {
	id   string
	text string
}

// pfKeys are the top-level keys that shape tests; pfQuiet are keys about
// running promptfoo itself (where to write results, sharing, env), which
// have no bearing on the battery.
var (
	pfKeys  = []string{"prompts", "tests", "defaultTest", "providers", "description"}
	pfQuiet = []string{"outputPath", "sharing", "evaluateOptions", "writeLatestResults", "commandLineOptions", "tags", "env", "tracing", "metadata", "$schema", "assertionTemplates"}
)

// maxExpandedTests bounds the tests a promptfoo config may expand into, so
// that a short file of many prompts and long lists cannot ask for millions.
const maxExpandedTests = 20000

// readPFYAML parses a promptfoo YAML file: its root node, where each of
// its values is, and its content as JSON would hold it. empty names the
// file's kind, for the error a file with nothing in it gets.
func readPFYAML(path string, data []byte, empty string) (*yaml.Node, *config.Source, any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, nil, yamlError(path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil, nil, &config.Error{File: path, Line: 1, Msg: "the " + empty + " is empty", Hint: "a promptfoo config has prompts and tests"}
	}
	root := doc.Content[0]
	var top any
	if err := root.Decode(&top); err != nil {
		return nil, nil, nil, yamlError(path, err)
	}
	return root, locateYAML(path, root), config.JSONNormalize(top), nil
}

func loadPromptfoo(f config.File) ([]config.Test, error) {
	path, data, n := f.Path, f.Data, f.Notes
	root, src, top, err := readPFYAML(path, data, "battery file")
	if err != nil {
		return nil, err
	}
	col := config.NewCollector(src)
	if e := config.NotABattery(path, root.Line, top); e != nil {
		return nil, e
	}
	m, ok := top.(map[string]any)
	if !ok {
		hint := "a promptfoo config is a table with prompts and tests"
		if root.Kind == yaml.SequenceNode {
			hint = "this looks like a promptfoo tests file (a list of tests): point battery = at the promptfoo config that names it"
		}
		return nil, &config.Error{File: path, Line: root.Line, Msg: "not a promptfoo config: the file holds " + config.Describe(top, "json"), Hint: hint}
	}
	m = dereference(col, m).(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(pfKeys, k) && !slices.Contains(pfQuiet, k) {
			n.Add(fmt.Sprintf("promptfoo key %q is not read", k), "")
		}
	}
	prompts, err := pfPrompts(f, mapValue(root, "prompts"), n)
	if err != nil {
		return nil, err
	}
	testsNode := mapValue(root, "tests")
	if testsNode == nil || testsNode.Kind != yaml.SequenceNode {
		line := 1
		if testsNode != nil {
			line = testsNode.Line
		}
		return nil, &config.Error{File: path, Line: line, Field: "tests",
			Msg:  "tests must be a list written in this file",
			Hint: "pitwall reads inline promptfoo tests only (not file:// or CSV tests)"}
	}
	lenient := func(what string) func(string, string) {
		return func(_, key string) { n.Add(fmt.Sprintf("promptfoo %s key %q is not read", what, key), "") }
	}
	var def pfTest
	if raw, ok := m["defaultTest"]; ok {
		def, _ = decodePFTest(col, raw, "defaultTest", lenient("defaultTest"))
	}
	base := pfBase{file: f, n: n, col: col, prompts: prompts, def: def}
	base.provider = providersRequest(col, n, m["providers"])
	base.promptPrix = promptPrixShape(m)
	if base.promptPrix {
		base.defReq = pfProviderRequest(col, n, def.Options.Provider, "defaultTest.options.provider")
	}
	base.defProvider = def.Provider
	pfRunNotes(n, def, "")

	tl := newTestList(n)
	pp := newPromptPrixIDs()
	rawTests, _ := m["tests"].([]any)
	for i, raw := range rawTests {
		at := config.IndexPath("tests", i)
		line := src.Line(at)
		pt, ok := decodePFTest(col, raw, at, lenient("test"))
		if !ok {
			continue
		}
		expanded := base.expand(pt, i, at)
		for p := range prompts {
			alias := pp.next(pt, i)
			if p < len(expanded) {
				expanded[p].Aliases = append(expanded[p].Aliases, alias)
			}
		}
		if len(tl.tests)+len(expanded) > maxExpandedTests {
			return nil, &config.Error{File: path, Line: line, Field: at,
				Msg:  fmt.Sprintf("prompts × tests × list-valued vars make more than %d tests", maxExpandedTests),
				Hint: "split the config into several batteries"}
		}
		for _, t := range expanded {
			t.Source = fmt.Sprintf("%s:%d", path, line)
			src.Set(config.IndexPath("tests", len(tl.tests)), line)
			tl.add(t)
		}
		for k := len(tl.tests) - len(expanded); k < len(tl.tests); k++ {
			t := &tl.tests[k]
			t.Aliases = slices.DeleteFunc(t.Aliases, func(a string) bool { return a == t.ID })
		}
	}
	if len(col.Errs) > 0 {
		return nil, col.Errs.Err()
	}
	return config.FinishTests(tl.tests, src, nil, n)
}

// decodePFTest reads a test (or defaultTest) from its generic decoding,
// reporting wrong types at their fields and unknown keys to unknown.
func decodePFTest(col *config.Collector, raw any, at string, unknown func(string, string)) (pfTest, bool) {
	before := len(col.Errs)
	config.CheckShapeWith(col, raw, reflect.TypeFor[pfTest](), "json", at, unknown)
	if len(col.Errs) > before {
		return pfTest{}, false
	}
	var pt pfTest
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, &pt)
	}
	if err != nil {
		col.Add(at, "", "cannot read the test: %s", config.JSONDecodeError(col.Src.File, b, 0, err).Msg)
		return pfTest{}, false
	}
	return pt, true
}

// testList gathers tests, making ids unique as prompt-prix's promptfoo
// reader does (a second "x" becomes "x-2").
type testList struct {
	tests []config.Test
	seen  map[string]bool
	n     *config.Notes
}

func newTestList(n *config.Notes) *testList { return &testList{seen: map[string]bool{}, n: n} }

func (l *testList) add(t config.Test) {
	if l.seen[t.ID] {
		id := t.ID
		for k := 2; l.seen[t.ID]; k++ {
			t.ID = fmt.Sprintf("%s-%d", id, k)
		}
		l.n.Add("tests share an id (from their description or vars): later ones get -2, -3 …", t.ID)
	}
	l.seen[t.ID] = true
	l.tests = append(l.tests, t)
}

// promptPrixIDs derives the ids prompt-prix gives a promptfoo config's
// tests (its PromptfooLoader): one per (test, prompt), metadata.test_id,
// else the description as a slug of at most 50 characters, else
// promptfoo_N (N the test's place, from 1), a repeat made unique with -2,
// -3 …. It reads no vars (not vars.test_id), expands no list-valued vars
// and merges no defaultTest. pitwall keeps its own ids (see pfTest) and
// gives each test prompt-prix's as an alias, which an import of
// prompt-prix's results for the file joins on.
type promptPrixIDs struct{ seen map[string]bool }

func newPromptPrixIDs() *promptPrixIDs { return &promptPrixIDs{seen: map[string]bool{}} }

func (p *promptPrixIDs) next(pt pfTest, i int) string {
	base, _ := pt.Metadata["test_id"].(string)
	if base == "" && pt.Description != "" {
		base = slug(pt.Description)
		if len(base) > 50 {
			base = base[:50] // ASCII: the slug is [a-z0-9-]
		}
	}
	if base == "" {
		base = fmt.Sprintf("promptfoo_%d", i+1)
	}
	id := base
	for k := 2; p.seen[id]; k++ {
		id = fmt.Sprintf("%s-%d", base, k)
	}
	p.seen[id] = true
	return id
}

// mapValue returns the value node of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// locateYAML maps every value under root to its line, as locateJSON does.
func locateYAML(file string, root *yaml.Node) *config.Source {
	src := config.NewSource(file)
	var walk func(n *yaml.Node, path string, depth int)
	walk = func(n *yaml.Node, path string, depth int) {
		if n == nil || depth > config.MaxNesting {
			return
		}
		if n.Kind == yaml.AliasNode {
			src.Set(path, n.Line)
			return // its target is located where it is written
		}
		src.Set(path, n.Line)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], config.JoinPath(path, n.Content[i].Value), depth+1)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, config.IndexPath(path, i), depth+1)
			}
		}
	}
	walk(root, "", 0)
	return src
}

// pfPrompts reads prompts: one string, or a list of strings or {raw, id,
// label} tables; a file:// prompt is read from beside the config.
func pfPrompts(f config.File, n *yaml.Node, notes *config.Notes) ([]pfPrompt, error) {
	path := f.Path
	bad := func(line int, msg string) error {
		return &config.Error{File: path, Line: max(line, 1), Field: "prompts", Msg: msg,
			Hint: "write prompts inline, a string with {{var}} placeholders or {raw: ..., label: ...}, or file:// a .txt, .md or .json file"}
	}
	var items []*yaml.Node
	switch {
	case n == nil:
		return nil, bad(1, "no prompts")
	case n.Kind == yaml.ScalarNode:
		items = []*yaml.Node{n}
	case n.Kind == yaml.SequenceNode:
		items = n.Content
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
			for k := 0; k+1 < len(it.Content); k += 2 {
				key, val := it.Content[k].Value, it.Content[k+1]
				if val.Kind != yaml.ScalarNode {
					return nil, bad(val.Line, fmt.Sprintf("prompt %s must be text", key))
				}
				switch key {
				case "raw":
					p.text = val.Value
				case "id":
					p.id = val.Value
				case "label":
					if mapValue(it, "id") == nil {
						p.id = val.Value
					}
				default:
					notes.Add(fmt.Sprintf("prompt key %q is not read", key), "")
				}
			}
		default:
			return nil, bad(it.Line, "a prompt must be a string or {raw: ...}")
		}
		if ref, ok := strings.CutPrefix(strings.TrimSpace(p.text), "file://"); ok {
			text, err := pfPromptFile(f, ref)
			if err != nil {
				return nil, bad(it.Line, err.Error())
			}
			p.text = text
			if p.id == fmt.Sprintf("p%d", i+1) {
				p.id = strings.TrimSuffix(filepath.Base(ref), filepath.Ext(ref))
			}
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

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlError(path string, err error) *config.Error {
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		fmt.Sscan(m[1], &line)
	}
	return &config.Error{File: path, Line: line, Msg: "YAML: " + yamlMessage(err),
		Hint: "check indentation and quoting near this line"}
}

var (
	yamlPrefix = regexp.MustCompile(`^yaml: (line \d+: )?`)
	// yamlGoType is the Go type yaml.v3 names when a value does not fit
	// ("into map[string]interface {}"), which a user cannot act on.
	yamlGoType = regexp.MustCompile(` into \S+.*$`)
)

func yamlMessage(err error) string {
	msg := yamlPrefix.ReplaceAllString(err.Error(), "")
	return yamlGoType.ReplaceAllString(msg, "")
}
