package history

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"strconv"
	"strings"

	"pitwall/runner/compare"
)

// The page's parts: the skeleton, its style and its script, inlined into
// one file so that it opens anywhere with no network.
//
//go:embed report/page.html report/page.css report/page.js
var reportFS embed.FS

// htmlData is what the page's script reads from its JSON block.
type htmlData struct {
	Runs       []htmlRun       `json:"runs"`
	Comparison *compare.Report `json:"comparison"`
	Legend     string          `json:"legend"`
}

// htmlRun is a run's export with each cell's mark and reason, index by
// index, so that the page shows what the other formats show without
// deciding it again.
type htmlRun struct {
	*Export
	Marks []string `json:"marks"`
	Why   []string `json:"why"`
}

// writeHTML writes one self-contained page: the runs' data as JSON in a
// <script type="application/json"> block, and a script that draws the
// page from it with textContent only. Model output therefore never
// becomes markup: json.Marshal writes <, > and & as \u003c, \u003e and
// \u0026, so nothing in the data can close the block, and the script
// never parses data as HTML. The Content-Security-Policy allows no
// network and only the page's own script, by its hash: a <script> that
// slipped in anyway would not run.
func writeHTML(w io.Writer, xs []*Export, rep *compare.Report) error {
	d := htmlData{Comparison: rep, Legend: legend}
	for _, x := range xs {
		hr := htmlRun{Export: x, Marks: make([]string, len(x.Cells)), Why: make([]string, len(x.Cells))}
		for i := range x.Cells {
			hr.Marks[i], hr.Why[i] = mark(&x.Cells[i], true), why(&x.Cells[i])
		}
		d.Runs = append(d.Runs, hr)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	page, css, js, err := reportParts()
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(js))
	csp := "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
	title := "pitwall"
	if len(xs) == 1 {
		title = "pitwall · " + strings.TrimSpace(xs[0].Run.Name+" · run "+xs[0].Run.ID)
	} else if len(xs) > 1 {
		title = "pitwall · " + strconv.Itoa(len(xs)) + " runs compared"
	}
	out := strings.NewReplacer(
		"{{csp}}", html.EscapeString(csp),
		"{{title}}", html.EscapeString(title),
		"{{css}}", css,
		"{{data}}", string(safeJSON(data)),
		"{{js}}", js,
	).Replace(page)
	_, err = io.WriteString(w, out)
	return err
}

func reportParts() (page, css, js string, err error) {
	read := func(name string) string {
		if err != nil {
			return ""
		}
		var b []byte
		b, err = reportFS.ReadFile("report/" + name)
		return string(b)
	}
	page, css, js = read("page.html"), read("page.css"), read("page.js")
	return page, css, js, err
}

// safeJSON makes sure that no '<' is left in JSON bound for a script
// block, whatever encoder wrote it (json.Marshal already escapes it).
func safeJSON(b []byte) []byte { return bytes.ReplaceAll(b, []byte("<"), []byte(`\u003c`)) }
