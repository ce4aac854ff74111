package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestEveryExampleValidates validates every example config against a
// server of this test's own: each example is copied with its batteries,
// and every http(s) url in it is pointed at one loopback server that offers
// every model the examples name. So it passes whatever listens on the
// default ports (LM Studio's 1234, Ollama's 11434) or on the internet, and
// fails when an example names a model its own config does not declare
// (validate compares what the server offers with what the config asks).
func TestEveryExampleValidates(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	var models []string
	for _, f := range files {
		var doc map[string]any
		if _, err := toml.DecodeFile(f, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		models = append(models, modelNames(doc)...)
	}
	slices.Sort(models)
	models = slices.Compact(models)

	var asked atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if !strings.HasSuffix(r.URL.Path, "/v1/models") {
			http.NotFound(w, r)
			return
		}
		type model struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		}
		list := struct {
			Object string  `json:"object"`
			Data   []model `json:"data"`
		}{Object: "list"}
		for _, m := range models {
			list.Data = append(list.Data, model{ID: m, Object: "model"})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(list)
	}))
	t.Cleanup(fake.Close)

	dir := t.TempDir()
	urlLine := regexp.MustCompile(`(?m)^(\s*url\s*=\s*)"https?://[^"]*"`)
	var configs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		b = urlLine.ReplaceAllFunc(b, func(m []byte) []byte {
			n++
			prefix := urlLine.FindSubmatch(m)[1]
			return fmt.Appendf(nil, `%s"%s/%s%d/v1"`, prefix, fake.URL, strings.TrimSuffix(filepath.Base(f), ".toml"), n)
		})
		for _, l := range regexp.MustCompile(`(?m)^\s*url\s*=.*$`).FindAllString(string(b), -1) {
			if !strings.Contains(l, fake.URL) {
				t.Fatalf("%s still names a server of its own after the rewrite: %s", f, l)
			}
		}
		out := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f, "battery") {
			configs = append(configs, out)
		}
	}
	probed := 0
	for _, c := range configs {
		code, out, stderr := pitwall(t, dir, []string{"OPENAI_API_KEY=x"}, "validate", c)
		if code != 0 {
			t.Errorf("%s: exit %d:\n%s%s", filepath.Base(c), code, out, stderr)
		}
		if strings.Contains(stderr, "did not answer") {
			t.Errorf("%s: a server did not answer: the rewrite missed a url or the fake is not what a probe reads:\n%s", filepath.Base(c), stderr)
		}
		probed++
	}
	if probed == 0 || asked.Load() == 0 {
		t.Errorf("%d configs validated, %d requests reached the fake: the examples were not checked against a server", probed, asked.Load())
	}
}

// modelNames collects every string under a "models" or "model" key.
func modelNames(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch e := e.(type) {
			case string:
				if k == "model" {
					out = append(out, e)
				}
			case []any:
				if k == "models" {
					for _, m := range e {
						if s, ok := m.(string); ok {
							out = append(out, s)
						}
					}
				} else {
					out = append(out, modelNames(e)...)
				}
			default:
				out = append(out, modelNames(e)...)
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, modelNames(e)...)
		}
	case []map[string]any:
		for _, e := range x {
			out = append(out, modelNames(e)...)
		}
	}
	return out
}
