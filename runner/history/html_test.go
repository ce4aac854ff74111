package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var (
	scriptTag = regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	cspMeta   = regexp.MustCompile(`script-src 'sha256-([A-Za-z0-9+/=]+)'`)
)

// TestHTMLIsSelfContainedAndEscaped checks the page without a browser:
// two script elements (the data and the page's own), no '<' inside the
// data, the injected markup only as escaped JSON, the page's script allowed
// by its hash, nothing fetched from the network and no innerHTML.
func TestHTMLIsSelfContainedAndEscaped(t *testing.T) {
	led := fixture(t)
	page := string(render(t, led, "html", run1, run2))
	tags := scriptTag.FindAllStringSubmatch(page, -1)
	if len(tags) != 2 {
		t.Fatalf("%d <script> elements, want 2 (the data and the page's own)", len(tags))
	}
	data, js := tags[0], tags[1]
	if !strings.Contains(data[1], `type="application/json"`) {
		t.Fatalf("the first script is %q, want the JSON data block", data[1])
	}
	if strings.Contains(data[2], "<") {
		t.Error("a '<' inside the JSON block: model output could close it")
	}
	if !strings.Contains(data[2], `\u003cscript\u003ewindow.__pwned=1\u003c/script\u003e`) {
		t.Error("the injected reply is not in the data, escaped")
	}
	if n := strings.Count(page, "window.__pwned"); n != 6 {
		t.Errorf("window.__pwned appears %d times, want 6 (three in the reply of each run, nowhere else)", n)
	}
	m := cspMeta.FindStringSubmatch(html.UnescapeString(page))
	sum := sha256.Sum256([]byte(js[2]))
	if m == nil || m[1] != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Errorf("the CSP does not allow the page's script by its hash (%v)", m)
	}
	if !strings.Contains(html.UnescapeString(page), "default-src 'none'") {
		t.Error("the CSP does not forbid the network")
	}
	outside := strings.Replace(page, data[2], "", 1)
	for _, bad := range []string{"http://", "https://", "//cdn", "@import", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(outside, bad) {
			t.Errorf("the page (outside its data) contains %q", bad)
		}
	}
}

// TestHTMLInChromium opens the page in a headless Chromium and uses it as
// a person would: the grid must be visible with sticky headers, clicking a
// cell must open it, the injected <script> and onerror in a reply must show
// as text and never run, the filters must filter, and the page must log no
// error and make no network request. PITWALL_SCREENSHOT=FILE keeps the
// screenshot (docs/export-html.png is made this way).
func TestHTMLInChromium(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed: scripts/install-chromium.sh installs it (Debian's chromium package)")
	}
	led := fixture(t)
	dir := t.TempDir()
	one := filepath.Join(dir, "one.html")
	two := filepath.Join(dir, "two.html")
	if err := os.WriteFile(one, render(t, led, "html", run1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, render(t, led, "html", run1, run2), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := startBrowser(t, bin)
	p, err := b.newPage(ctx, 1280, 800)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.navigate(ctx, "file://"+one); err != nil {
		t.Fatal(err)
	}

	var grid struct {
		Rows, Cols     int
		W, H           float64
		Sticky, Hidden string
	}
	must(t, p.eval(ctx, `(() => { const g = document.getElementById("grid"), r = g.getBoundingClientRect();
		return { Rows: g.querySelectorAll("tbody tr").length, Cols: g.querySelectorAll("thead th").length, W: r.width, H: r.height,
			Sticky: getComputedStyle(g.querySelector("thead th")).position, Hidden: String(document.getElementById("detail").hidden) }; })()`, &grid))
	if grid.Rows != 6 || grid.Cols != 4 || grid.W <= 0 || grid.H <= 0 {
		t.Fatalf("grid %+v: want 6 rows, 4 header cells (test, 2 models, pass rate), visible", grid)
	}
	if grid.Sticky != "sticky" || grid.Hidden != "true" {
		t.Errorf("header position %q, detail hidden %q; want sticky and true", grid.Sticky, grid.Hidden)
	}

	// Click the cell whose reply is the injected markup, where it is drawn.
	var at struct{ X, Y float64 }
	must(t, p.eval(ctx, `(() => { const b = document.querySelector('button.cell[data-model="beta|b"][data-test="json_person"]');
		b.scrollIntoView({block: "center"}); const r = b.getBoundingClientRect(); return { X: r.x + r.width / 2, Y: r.y + r.height / 2 }; })()`, &at))
	must(t, p.click(ctx, at.X, at.Y))
	var opened struct {
		Open                 bool
		Title, Reply, Prompt string
		Judges, Scripts, Img int
		Pwned                any
	}
	must(t, p.eval(ctx, `(() => ({ Open: !document.getElementById("detail").hidden,
		Title: document.getElementById("detail-title").textContent,
		Reply: (document.querySelector("#detail-body pre.reply") || {}).textContent || "",
		Prompt: document.getElementById("detail-body").textContent,
		Judges: document.querySelectorAll("#detail-body .judge").length,
		Scripts: document.scripts.length, Img: document.images.length,
		Pwned: window.__pwned === undefined ? null : window.__pwned }))()`, &opened))
	if !opened.Open || opened.Title != "beta|b × json_person" {
		t.Fatalf("after the click: open %v, title %q; want the cell beta|b × json_person open", opened.Open, opened.Title)
	}
	if opened.Reply != injected {
		t.Errorf("the reply reads %q, want the model's text as it was: %q", opened.Reply, injected)
	}
	if opened.Pwned != nil || opened.Scripts != 2 || opened.Img != 0 {
		t.Errorf("the injected markup ran or became elements: __pwned %v, %d scripts, %d images", opened.Pwned, opened.Scripts, opened.Img)
	}
	for _, want := range []string{"Answer briefly.", "Test json_person: <b>do it</b>", "j1 says fail on <i>json_person</i>", "VERDICT: fail"} {
		if !strings.Contains(opened.Prompt, want) {
			t.Errorf("the cell's detail lacks %q", want)
		}
	}
	if opened.Judges != 3 {
		t.Errorf("%d judges in the detail, want j1, j2 and the jury", opened.Judges)
	}
	var hash string
	must(t, p.eval(ctx, `location.hash`, &hash))
	if want := "#run=" + run1 + "&model=beta%7Cb&test=json_person&repeat=0"; hash != want {
		t.Errorf("the open cell's link is %q, want %q", hash, want)
	}
	shot, err := p.screenshot(ctx)
	must(t, err)
	checkScreenshot(t, shot, 1280, 800)
	if path := os.Getenv("PITWALL_SCREENSHOT"); path != "" {
		must(t, os.WriteFile(path, shot, 0o644))
	}

	// Filters: FAIL-ish cells only, then one model hidden.
	var rows struct{ Fail, Hidden int }
	must(t, p.eval(ctx, `(() => { const s = document.getElementById("f-verdict"); s.value = "fail"; s.dispatchEvent(new Event("change"));
		const fail = document.querySelectorAll("#grid tbody tr").length;
		const cb = document.querySelector('#f-models input[data-model="alpha"]'); cb.click();
		return { Fail: fail, Hidden: document.querySelectorAll("#grid thead th").length }; })()`, &rows))
	if rows.Fail != 2 || rows.Hidden != 3 {
		t.Errorf("verdict filter kept %d rows (want 2: weather_tool, json_person); hiding alpha left %d header cells (want 3)", rows.Fail, rows.Hidden)
	}

	// Two runs, opened on a link to a cell of the second: the comparison
	// shows, the second run is in view with the cell open.
	if err := p.navigate(ctx, "file://"+two+"#run="+run2+"&model=alpha&test=json_list&repeat=0"); err != nil {
		t.Fatal(err)
	}
	var linked struct {
		Open         bool
		Title, Reply string
	}
	must(t, p.eval(ctx, `({ Open: !document.getElementById("detail").hidden, Title: document.getElementById("title").textContent,
		Reply: (document.querySelector("#detail-body pre.reply") || {}).textContent || "" })`, &linked))
	if !linked.Open || !strings.Contains(linked.Title, run2) || linked.Reply != "[1,2,3]" {
		t.Errorf("a link to run 2's alpha × json_list: open %v, title %q, reply %q", linked.Open, linked.Title, linked.Reply)
	}
	var cmp struct {
		Shown bool
		Text  string
		Title string
	}
	must(t, p.eval(ctx, `(() => { const sec = document.getElementById("comparison-section");
		document.querySelectorAll("#runs button")[0].click();
		return { Shown: !sec.hidden, Text: sec.textContent, Title: document.getElementById("title").textContent }; })()`, &cmp))
	if !cmp.Shown || !strings.Contains(cmp.Text, "2 fixed, 1 broke, 0 flipped") || !strings.Contains(cmp.Title, run1) {
		t.Errorf("two runs: comparison shown %v, title %q, text %q", cmp.Shown, cmp.Title, cmp.Text)
	}
	for _, pr := range p.problems() {
		t.Errorf("the page reported: %s", pr)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkScreenshot decodes a PNG of the expected size that is not one flat
// colour (a blank page would be).
func checkScreenshot(t *testing.T, b []byte, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != w || r.Dy() != h {
		t.Errorf("screenshot %v, want %d×%d", r, w, h)
	}
	colours := map[[4]uint32]bool{}
	for y := 0; y < h; y += 7 {
		for x := 0; x < w; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("the screenshot has %d colours: is the page blank?", len(colours))
	}
}
