package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
	"regexp"
	"sort"
	"strings"
	"sync"
	"text/template"
)

// Template is a judge prompt. User is a text/template executed with
// TemplateData; its output must hold the <task>, <criteria>, <reference> and
// <candidate_output> blocks in that order (the simulator's judge model and
// any serious judge read them), and ask for a final `VERDICT: PASS` or
// `VERDICT: FAIL` line, which Parse reads.
type Template struct {
	ID      string // as named in config: "rubric-v2"
	Version string // bumped when the text changes in a way that changes verdicts
	System  string // the judge's system message; none when empty
	User    string // a text/template over TemplateData
}

// TemplateData is what a template's User text sees. Every field is ready to
// put inside its block: defaults filled in and text that could close a block
// early neutralised. The candidate's reply is there only as Candidate, as
// RenderCandidate wrote it: no template can reach the raw text.
type TemplateData struct {
	Task      string // system prompt, user prompt and tools, as one text
	Criteria  string // the criteria, or a default that asks for a correct, complete answer
	Reference string // the reference answer, or "(none)"
	Candidate string // the candidate's reply and tool calls (RenderCandidate), or "(empty reply)"
}

// DefaultTemplate is the template a judge uses when config names none.
const DefaultTemplate = "rubric-v2"

// DefaultCriteria stands in for a test without criteria.
const DefaultCriteria = "The answer is correct, complete and follows the instructions."

// LookupTemplate returns a built-in template by id ("" means the default).
func LookupTemplate(id string) (Template, bool) {
	if id == "" {
		id = DefaultTemplate
	}
	t, ok := builtinTemplates[id]
	return t, ok
}

// TemplateIDs lists the built-in templates, for config's error messages.
func TemplateIDs() []string {
	ids := make([]string, 0, len(builtinTemplates))
	for id := range builtinTemplates {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Hash identifies the template's text, so that a cached verdict is never
// reused across a change to it even when its version was not bumped.
func (t Template) Hash() string {
	h := sha256.New()
	for _, f := range []string{t.ID, t.Version, t.System, t.User} {
		// Length prefixes keep ("ab","c") and ("a","bc") apart.
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks a template: it has an id, its User text parses and runs, and
// its output holds the four blocks in order.
func (t Template) Verify() error {
	if t.ID == "" {
		return fmt.Errorf("template has no id")
	}
	out, err := execute(t, templateData(Input{Prompt: "p", Reply: "c"}))
	if err != nil {
		return fmt.Errorf("template %s: %w", t.ID, err)
	}
	at := 0
	for _, tag := range blockTags {
		i := strings.Index(out[at:], "<"+tag+">")
		if i < 0 {
			return fmt.Errorf("template %s: no <%s> block (after the ones before it)", t.ID, tag)
		}
		at += i
	}
	return nil
}

// Render builds the judge's messages: the template's system message, if any,
// and the user message. A template whose User text fails (Verify would have
// said so) is replaced by the plain blocks, so a judge still gets a prompt
// Parse can read the answer to.
func Render(t Template, in Input) []chat.Message {
	data := templateData(in)
	user, err := execute(t, data)
	if err != nil {
		user = plainBlocks(data)
	}
	msgs := make([]chat.Message, 0, 2)
	if t.System != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: t.System})
	}
	return append(msgs, chat.Message{Role: "user", Content: user})
}

var blockTags = []string{"task", "criteria", "reference", "candidate_output"}

// blockTagRE finds anything that reads as one of the block tags, opening or
// closing, in any case and with stray spaces or attributes (`</ Candidate_Output >`).
// In the task, criteria and reference such text is escaped, so that a
// battery's text cannot close a block; the candidate's text has its own,
// stricter path (RenderCandidate).
var blockTagRE = regexp.MustCompile(`(?i)<\s*/?\s*(?:task|criteria|reference|candidate_output)\b[^<>]*>?`)

func neutralise(s string) string {
	return blockTagRE.ReplaceAllStringFunc(s, func(m string) string {
		return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(m)
	})
}

func templateData(in Input) TemplateData {
	d := TemplateData{
		Task:      neutralise(taskText(in)),
		Criteria:  neutralise(strings.TrimSpace(in.Criteria)),
		Reference: neutralise(strings.TrimSpace(in.Reference)),
		Candidate: in.candidateText(),
	}
	if d.Criteria == "" {
		d.Criteria = DefaultCriteria
	}
	if d.Reference == "" {
		d.Reference = "(none)"
	}
	if d.Candidate == "" {
		d.Candidate = "(empty reply)"
	}
	return d
}

// taskText puts the system prompt, the user prompt and the tools into one
// text; labels appear only when there is more than the user prompt.
func taskText(in Input) string {
	system, prompt := strings.TrimSpace(in.System), strings.TrimSpace(in.Prompt)
	if system == "" && len(in.Tools) == 0 {
		return prompt
	}
	var b strings.Builder
	if system != "" {
		b.WriteString("System prompt:\n" + system + "\n\n")
	}
	b.WriteString("User prompt:\n" + prompt)
	if len(in.Tools) > 0 {
		b.WriteString("\n\nTools offered (JSON):\n" + textutil.JSON(in.Tools))
	}
	return b.String()
}

func execute(t Template, d TemplateData) (string, error) {
	tpl, err := parsed(t)
	if err != nil {
		return "", fmt.Errorf("parse: %w", err)
	}
	var b strings.Builder
	if err := tpl.Execute(&b, d); err != nil {
		return "", fmt.Errorf("execute: %w", err)
	}
	return b.String(), nil
}

// parsedTemplates keeps each template's parsed User text, by its id and
// text: a run renders one template for every judge request, and parsing it
// each time cost more than executing it. A parsed template may be executed
// by many goroutines at once. The cache stops growing at maxParsed
// templates (a run has a few); past that each one is parsed afresh.
var parsedTemplates struct {
	sync.Mutex
	m map[[2]string]*template.Template
}

const maxParsed = 256

func parsed(t Template) (*template.Template, error) {
	key := [2]string{t.ID, t.User}
	parsedTemplates.Lock()
	tpl := parsedTemplates.m[key]
	parsedTemplates.Unlock()
	if tpl != nil {
		return tpl, nil
	}
	tpl, err := template.New(t.ID).Option("missingkey=error").Parse(t.User)
	if err != nil {
		return nil, err
	}
	parsedTemplates.Lock()
	defer parsedTemplates.Unlock()
	if parsedTemplates.m == nil {
		parsedTemplates.m = map[[2]string]*template.Template{}
	}
	if len(parsedTemplates.m) < maxParsed {
		parsedTemplates.m[key] = tpl
	}
	return tpl, nil
}

func plainBlocks(d TemplateData) string {
	var b strings.Builder
	for i, v := range []string{d.Task, d.Criteria, d.Reference, d.Candidate} {
		fmt.Fprintf(&b, "<%s>\n%s\n</%s>\n", blockTags[i], v, blockTags[i])
	}
	b.WriteString("\n" + verdictInstructions)
	return b.String()
}
