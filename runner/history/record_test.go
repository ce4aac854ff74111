package history

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pitwall/runner/ledger"
)

// severityConfig is a run's record as config.RedactedJSON writes it: ids
// under tests, categories and severities in maps, and the battery's
// warnings.
const severityConfig = `{"name":"demo","tests":["weather_tool","pick_tool","json_person","json_list","arithmetic","summarise"],` +
	`"test_categories":{"weather_tool":"tools","pick_tool":"tools","json_person":"json","json_list":"json"},` +
	`"test_severities":{"weather_tool":"critical","json_person":"critical","json_list":"warning","arithmetic":"info"},` +
	`"warnings":["pf.yaml: 2× \"python\" assertion not checked <b>(in weather_tool, json_list)</b>"]}`

const sevRun = "20261123-120000-cccc"

// severityFixture is a ledger with one run recorded with severityConfig,
// whose process was recorded to exit 1.
func severityFixture(t *testing.T) *ledger.Ledger {
	t.Helper()
	led := newLedger(t)
	putRunRecord(t, led, sevRun, fixtureStart, fixtureCells(), severityConfig)
	if err := led.SetExitCode(sevRun, 1); err != nil {
		t.Fatal(err)
	}
	return led
}

func TestExportsCarrySeveritiesWarningsAndTheExitCode(t *testing.T) {
	led := severityFixture(t)

	var x Export
	if err := json.Unmarshal(render(t, led, "json", sevRun), &x); err != nil {
		t.Fatal(err)
	}
	if x.Severities["weather_tool"] != "critical" || x.Categories["json_list"] != "json" || len(x.Warnings) != 1 {
		t.Errorf("severities %v categories %v warnings %q", x.Severities, x.Categories, x.Warnings)
	}
	if x.Run.ExitCode == nil || *x.Run.ExitCode != 1 {
		t.Errorf("run.exit_code %v, want 1", x.Run.ExitCode)
	}
	for _, c := range x.Cells {
		if c.Severity != x.Severities[c.Test] {
			t.Errorf("cell %s × %s: severity %q, want %q", c.Model, c.Test, c.Severity, x.Severities[c.Test])
		}
	}

	rows, err := csv.NewReader(bytes.NewReader(render(t, led, "csv", sevRun))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if _, ok := col["severity"]; !ok || col["severity"] != col["category"]+1 {
		t.Fatalf("csv header %v: want severity after category", rows[0])
	}
	for _, r := range rows[1:] {
		if r[col["severity"]] != x.Severities[r[col["test"]]] {
			t.Errorf("csv row of %s: severity %q", r[col["test"]], r[col["severity"]])
		}
	}

	md := string(render(t, led, "md", sevRun))
	for _, want := range []string{
		"· exit 1", "**Battery warnings:**", `&lt;b&gt;(in weather\_tool, json\_list)&lt;/b&gt;`,
		"| test | category | severity |", "| `weather_tool` | tools | critical |", "| `summarise` | — | — |",
		"| test | severity | model | repeat |", "| `json_person` | critical | `beta\\|b` |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "<b>") {
		t.Error("a warning's markup reached the markdown unescaped")
	}

	junit := string(render(t, led, "junit", sevRun))
	for _, want := range []string{`<testcase name="weather_tool" classname="pitwall.alpha"`,
		`<property name="severity" value="critical"></property>`, `<property name="category" value="tools"></property>`} {
		if !strings.Contains(junit, want) {
			t.Errorf("junit lacks %q:\n%s", want, junit)
		}
	}

	page := string(render(t, led, "html", sevRun))
	for _, want := range []string{`"severities":{`, `"warnings":[`, `"exit_code":1`, `id="f-severity"`, `id="warnings-section"`} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %q", want)
		}
	}
}

// A run recorded before the record kept severities and warnings, and its
// exit code, exports without them.
func TestExportsOfARunRecordedBeforeHaveNone(t *testing.T) {
	led := newLedger(t)
	putRunRecord(t, led, "old", fixtureStart, fixtureCells(), `{"name":"demo","tests":["weather_tool"]}`)
	var x struct {
		Run   map[string]any   `json:"run"`
		Cells []map[string]any `json:"cells"`
	}
	var top map[string]any
	raw := render(t, led, "json", "old")
	if json.Unmarshal(raw, &x) != nil || json.Unmarshal(raw, &top) != nil || len(x.Cells) == 0 {
		t.Fatalf("not an export:\n%s", raw)
	}
	for _, k := range []string{"severities", "warnings", "categories"} {
		if _, ok := top[k]; ok {
			t.Errorf("the export of an old run has %s: %v", k, top[k])
		}
	}
	if _, ok := x.Run["exit_code"]; ok {
		t.Errorf("the export of an old run has an exit code: %v", x.Run["exit_code"])
	}
	if _, ok := x.Cells[0]["severity"]; ok {
		t.Errorf("a cell of an old run has a severity: %v", x.Cells[0])
	}
	if md := string(render(t, led, "md", "old")); strings.Contains(md, "severity") || strings.Contains(md, "Battery warnings") {
		t.Errorf("the markdown of an old run has severity or warnings:\n%s", md)
	}
}

// TestHTMLSeverityFilterInChromium uses the severity filter as a person
// would, and reads the warnings and the exit code on the page.
func TestHTMLSeverityFilterInChromium(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed: scripts/install-chromium.sh installs it (Debian's chromium package)")
	}
	led := severityFixture(t)
	path := filepath.Join(t.TempDir(), "sev.html")
	if err := os.WriteFile(path, render(t, led, "html", sevRun), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startBrowser(t, bin)
	p, err := b.newPage(ctx, 1280, 800)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.navigate(ctx, "file://"+path); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Options                      []string
		All, Critical, Warning, Info []string
		Tags                         []string
		Warnings, WarnHTML, Meta     string
		WarnShown, FilterShown       bool
		Detail                       string
	}
	must(t, p.eval(ctx, `(() => {
		const s = document.getElementById("f-severity");
		const rows = () => [...document.querySelectorAll("#grid tbody tr th")].map((th) => th.firstChild.textContent);
		const pick = (v) => { s.value = v; s.dispatchEvent(new Event("change")); return rows(); };
		const out = { Options: [...s.options].map((o) => o.value), All: rows(), FilterShown: !s.parentElement.hidden,
			Tags: [...document.querySelectorAll("#grid tbody th .sev")].map((e) => e.className + ":" + e.textContent),
			Warnings: document.getElementById("warnings").textContent,
			WarnHTML: document.getElementById("warnings").innerHTML.includes("<b>") ? "markup" : "text",
			WarnShown: !document.getElementById("warnings-section").hidden,
			Meta: document.getElementById("meta").textContent };
		out.Critical = pick("critical"); out.Warning = pick("warning"); out.Info = pick("info");
		pick("critical");
		document.querySelector('button.cell[data-test="weather_tool"]').click();
		out.Detail = document.getElementById("detail-body").textContent;
		return out; })()`, &got))
	if strings.Join(got.Options, ",") != ",critical,warning,info,—" || !got.FilterShown {
		t.Errorf("severity options %q (shown %v); want any, critical, warning, info and — for tests with none", got.Options, got.FilterShown)
	}
	if len(got.All) != 6 || strings.Join(got.Critical, ",") != "weather_tool,json_person" ||
		strings.Join(got.Warning, ",") != "json_list" || strings.Join(got.Info, ",") != "arithmetic" {
		t.Errorf("rows: all %v, critical %v, warning %v, info %v", got.All, got.Critical, got.Warning, got.Info)
	}
	if len(got.Tags) != 4 || got.Tags[0] != "sev sev-critical:critical" {
		t.Errorf("severity tags in the grid %q: want four, the first critical", got.Tags)
	}
	if !got.WarnShown || !strings.Contains(got.Warnings, `"python" assertion not checked <b>(in weather_tool`) || got.WarnHTML != "text" {
		t.Errorf("warnings shown %v, %q (%s): want the warning, as text", got.WarnShown, got.Warnings, got.WarnHTML)
	}
	if !strings.Contains(got.Meta, "exit 1") {
		t.Errorf("the header %q does not give the exit code", got.Meta)
	}
	if !strings.Contains(got.Detail, "severitycritical") {
		t.Errorf("the cell's detail does not give its test's severity:\n%s", got.Detail)
	}
	for _, pr := range p.problems() {
		t.Errorf("the page reported: %s", pr)
	}
}
