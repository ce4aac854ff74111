package history

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pitwall/runner/compare"
)

// longArgs is a call's arguments longer than the Markdown clip.
var longArgs = `{"path":"./docs/` + strings.Repeat("x", 200) + `.md"}`

// agentExport is run1 read back with an agent's loop on alpha ×
// weather_tool: a call answered with markup, one with long arguments, and
// an answer.
func agentExport(t *testing.T) ([]*Export, *compare.Report) {
	t.Helper()
	x, err := BuildExport(fixture(t), run1, "")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range x.Cells {
		c := &x.Cells[i]
		if c.Model != "alpha" || c.Test != "weather_tool" {
			continue
		}
		found = true
		c.Steps = []ExportStep{
			{Step: 1, Attempt: 1, Content: "Let me *look* first.", Calls: []ExportStepCall{
				{ID: "c1", Name: "list_directory", Arguments: `{"path":"./in"}`, Observation: ptr("[FILE] ./in/a.txt | " + injected)}}},
			{Step: 2, Attempt: 1, Calls: []ExportStepCall{
				{ID: "c2", Name: "read_file", Arguments: longArgs, Observation: ptr("line one\nline two")},
				{ID: "c3", Name: "move_file", Arguments: `{"source":"a"}`}}},
			{Step: 3, Attempt: 1, Content: "All files moved: a.txt to `docs/`."},
		}
	}
	if !found {
		t.Fatal("the fixture has no alpha × weather_tool cell")
	}
	rep, err := compare.Runs(compare.Options{}, x.CompareRun())
	if err != nil {
		t.Fatal(err)
	}
	return []*Export{x}, rep
}

func renderExports(t *testing.T, format string, xs []*Export, rep *compare.Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, format, xs, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The Markdown report folds each agent cell's loop under the grid: per step
// its calls (arguments clipped) with their observations, escaped so that
// neither markup nor a line break escapes the list, and the answer.
func TestMarkdownShowsAnAgentCellsTrajectory(t *testing.T) {
	t.Parallel()
	xs, rep := agentExport(t)
	md := renderExports(t, "md", xs, rep)
	for _, want := range []string{
		"<details><summary>1 agent cells' trajectories</summary>",
		"**`alpha` × `weather_tool` #1** · 3 steps",
		"1. Let me \\*look\\* first. — `list_directory` `{\"path\":\"./in\"}` → \\[FILE\\] ./in/a.txt \\| &lt;script&gt;window.\\_\\_pwned=1&lt;/script&gt;",
		"2. `read_file` `" + clip(longArgs, mdArgsClip) + "` → line one line two; `move_file` `{\"source\":\"a\"}` → (no observation)",
		"3. answer: All files moved: a.txt to \\`docs/\\`.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(md, longArgs) {
		t.Error("the long arguments are not clipped")
	}
	if strings.Contains(md, "<script>") || strings.Contains(md, "<img") {
		t.Error("markup from an observation reached the report unescaped")
	}
	if strings.Contains(md, "No final answer") {
		t.Error("a loop that ended with an answer is said to have none")
	}

	for i := range xs[0].Cells {
		if c := &xs[0].Cells[i]; len(c.Steps) > 0 {
			c.Steps = c.Steps[:2] // ends on calls
		}
	}
	if md := renderExports(t, "md", xs, rep); !strings.Contains(md, "No final answer") {
		t.Error("a loop that ended on calls is not said to have no answer")
	}
}

// The HTML page draws an agent cell's steps in its detail from the JSON
// block, with text nodes only: the observation's markup shows as text and
// never runs.
func TestHTMLShowsAnAgentCellsTrajectory(t *testing.T) {
	xs, rep := agentExport(t)
	page := renderExports(t, "html", xs, rep)
	if !strings.Contains(page, `"steps":[{"step":1`) || !strings.Contains(page, `"name":"list_directory"`) {
		t.Fatal("the page's data carries no steps")
	}
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed: scripts/install-chromium.sh installs it (Debian's chromium package)")
	}
	path := filepath.Join(t.TempDir(), "agent.html")
	must(t, os.WriteFile(path, []byte(page), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startBrowser(t, bin)
	p, err := b.newPage(ctx, 1280, 800)
	must(t, err)
	must(t, p.navigate(ctx, "file://"+path+"#run="+run1+"&model=alpha&test=weather_tool&repeat=0"))
	var got struct {
		Steps              int
		Text, Obs, Args    string
		Answer             string
		Scripts, Img       int
		Pwned              any
		OtherHasTrajectory bool
	}
	must(t, p.eval(ctx, `(() => { const d = document.getElementById("detail-body");
		const obs = d.querySelector(".trajectory pre.observation"), args = d.querySelectorAll(".trajectory code.args")[1];
		const r = { Steps: d.querySelectorAll(".trajectory li.step").length, Text: d.textContent,
			Obs: obs ? obs.textContent : "", Args: args ? args.textContent : "",
			Answer: (d.querySelector(".trajectory pre.answer") || {}).textContent || "",
			Scripts: document.scripts.length, Img: document.images.length,
			Pwned: window.__pwned === undefined ? null : window.__pwned };
		return r; })()`, &got))
	if got.Steps != 3 {
		t.Fatalf("%d steps drawn, want 3 (detail: %q)", got.Steps, got.Text)
	}
	if want := "[FILE] ./in/a.txt | " + injected; got.Obs != want {
		t.Errorf("the first observation reads %q, want the text as it was: %q", got.Obs, want)
	}
	if got.Args != clip(longArgs, 300) {
		t.Errorf("the long arguments read %q, want them clipped", got.Args)
	}
	if got.Answer != "All files moved: a.txt to `docs/`." {
		t.Errorf("the answer reads %q", got.Answer)
	}
	for _, want := range []string{"Trajectory (3 steps)", "list_directory", "move_file", "no observation recorded"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("the detail lacks %q", want)
		}
	}
	if got.Pwned != nil || got.Scripts != 2 || got.Img != 0 {
		t.Errorf("markup in an observation ran or became elements: __pwned %v, %d scripts, %d images", got.Pwned, got.Scripts, got.Img)
	}
	for _, pr := range p.problems() {
		t.Errorf("the page reported: %s", pr)
	}
}
