package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOfferedAfterDiscovery(t *testing.T) {
	t.Parallel()
	file := filepath.Join("testdata", "good", "pitwall.toml")
	all := map[string][]string{
		"gpu0": {"qwen3-8b", "granite-4.0-micro:latest"},
		"gpu1": {"gemma-3-12b"},
		"sim0": {"gemma-3-12b", "judge-small"},
	}
	tests := []struct {
		name    string
		ov      Overrides
		offered map[string][]string
		field   string // "" when no error is wanted
		at      string
		subs    []string
	}{
		{"all offered; ollama's :latest tag matches", Overrides{}, all, "", "", nil},
		{"a model no server offers names its line in the file", Overrides{},
			map[string][]string{"gpu0": {"qwen3-8b", "granite-4.0-micro"}, "sim0": {"judge-small"}},
			"models[2]", "models", []string{`"gemma-3-12b"`, "gpu0 offers qwen3-8b, granite-4.0-micro"}},
		{"a near name is suggested", Overrides{},
			map[string][]string{"gpu0": {"qwen3-8b", "granite-4.0-micro", "gemma-3-12b-it"}, "sim0": {"judge-small"}},
			"models[2]", "models", []string{"did you mean `gemma-3-12b-it`?"}},
		{"--models leaves the rest unchecked", Overrides{Models: []string{"qwen3-8b"}},
			map[string][]string{"gpu0": {"qwen3-8b"}, "sim0": {"judge-small"}}, "", "", nil},
		{"a judge's model on its own server", Overrides{},
			map[string][]string{"gpu0": {"qwen3-8b", "granite-4.0-micro", "gemma-3-12b", "judge-small"}, "sim0": {}},
			"scoring.judges[0].model", `model  = "judge-small"`, []string{`server "sim0" does not offer model "judge-small"`, "nothing (is it up?)"}},
		{"a judge not in use is not checked", Overrides{Judge: "hosted"},
			map[string][]string{"gpu0": {"qwen3-8b", "granite-4.0-micro", "gemma-3-12b"}}, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, file, tt.ov, noEnv)
			err := CheckOffered(c, tt.offered)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			wantErr(t, err, file, lineOf(t, file, tt.at, 1), tt.field, tt.subs...)
		})
	}
}

func TestCheckOfferedOnAHandMadeConfig(t *testing.T) {
	t.Parallel()
	c := &Config{Path: "x.toml", Models: []string{"m"}}
	err := CheckOffered(c, nil)
	wantErr(t, err, "x.toml", 0, "models", "no reachable server offers", "pitwall servers")
}

func TestRedactedJSONHoldsNamesNotSecrets(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, filepath.Join("testdata", "good", "pitwall.toml"), Overrides{}, noEnv)
	out := c.RedactedJSON()
	for _, secret := range []string{"hunter2", "sk-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("RedactedJSON leaks %q: %s", secret, out)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	tests := []struct {
		name, want string
	}{
		{"api_key_env names kept", `"api_key_env":"GPU1_KEY"`},
		{"judge key name kept", `"api_key_env":"OPENAI_API_KEY"`},
		{"url host kept", "gpu1.example:8000/v1"},
		{"timeout readable", `"timeout":"1m30s"`},
		{"test ids listed", `"tests":["weather-paris","capital-france","json-reply","named-choice"]`},
		{"resolved mode", `"mode":"jury"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(out, tt.want) {
				t.Errorf("RedactedJSON lacks %s: %s", tt.want, out)
			}
		})
	}
}

func TestLoadCarriesImporterWarnings(t *testing.T) {
	t.Parallel()
	body := `
battery = "pf.yaml"
models  = ["m1"]
[[servers]]
name = "s"
kind = "sim"
models = ["m1"]
`
	p := writeConfig(t, body)
	if err := copyFile(filepath.Join("testdata", "batteries", "promptfoo.yaml"), filepath.Join(filepath.Dir(p), "pf.yaml")); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, p, Overrides{}, noEnv)
	if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], `"python"`) || !strings.Contains(c.Warnings[1], "promptfoo's grader") {
		t.Errorf("Warnings = %q", c.Warnings)
	}
	if len(c.Tests) != 4 {
		t.Errorf("%d tests", len(c.Tests))
	}
}

func TestCheckOfferedMatchesAsTheServersSpellButRenamesNothing(t *testing.T) {
	t.Parallel()
	c := &Config{Path: "x.toml", Models: []string{"tiny-a", "Gemma-3-12B", "qwen/qwen3-8b", "m"},
		Scoring: Scoring{Judges: []Judge{
			{Name: "j", Model: "judge-small", Server: "gpu0"},
			{Name: "k", Model: "Judge-Big", Server: AnyServer},
		}, Mode: "jury"}}
	offered := map[string][]string{
		// One model, m, spelt two ways by two servers: neither spelling wins.
		"gpu0": {"tiny-a:latest", "judge-small:latest", "m:latest"},
		"gpu1": {"google/gemma-3-12b", "qwen/qwen3-8b", "pub/m", "judge-big"},
	}
	if err := CheckOffered(c, offered); err != nil {
		t.Fatal(err)
	}
	want := []string{"tiny-a", "Gemma-3-12B", "qwen/qwen3-8b", "m"}
	if strings.Join(c.Models, " ") != strings.Join(want, " ") {
		t.Errorf("models %v, want the config's names %v", c.Models, want)
	}
	if got := []string{c.Scoring.Judges[0].Model, c.Scoring.Judges[1].Model}; got[0] != "judge-small" || got[1] != "Judge-Big" {
		t.Errorf("judge models %v, want the config's names [judge-small Judge-Big]", got)
	}
	// A name two servers' lists would both match by a looser rule is not guessed.
	c = &Config{Path: "x.toml", Models: []string{"m"}}
	if err := CheckOffered(c, map[string][]string{"s": {"a/m", "b/m"}}); err == nil {
		t.Errorf("an ambiguous name was accepted")
	}
}

// A config's model matches a server's listed name as the fleet matches it
// (chat.MatchModel), before discovery too: Ollama's implicit tag, LM
// Studio's publisher, case.
func TestListedModelsMatchAsTheFleetMatches(t *testing.T) {
	t.Parallel()
	const servers = `
[[servers]]
name = "ollama"
url = "http://127.0.0.1:11434/v1"
models = ["m:latest"]

[[servers]]
name = "lms"
url = "http://127.0.0.1:1234/v1"
models = ["pub/Other"]
`
	for _, m := range []string{"m", "m:latest", "other", "pub/other"} {
		p := writeConfig(t, "battery = \"tools.toml\"\nmodels = [\""+m+"\"]\n"+servers)
		if _, err := Load(p, Overrides{}, noEnv); err != nil {
			t.Errorf("model %q: %v", m, err)
		}
	}
	p := writeConfig(t, "battery = \"tools.toml\"\nmodels = [\"mm\"]\n"+servers)
	_, err := Load(p, Overrides{}, noEnv)
	if err == nil || !strings.Contains(err.Error(), `"mm" is not offered`) {
		t.Errorf("model mm: %v, want not offered", err)
	}
}

// A judge on a fleet server named by another spelling of a tested model is
// that model: it takes the tested model's spelling, so that placement,
// which compares names, sees one model (and loads it once). A hosted judge
// keeps its own.
func TestAJudgeNamedAsATestedModelTakesItsSpelling(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, `
battery = "b.toml"
models = ["tiny-a", "tiny-b:latest"]
[[servers]]
name = "box"
url = "http://127.0.0.1:9/v1"
kind = "ollama"
[[scoring.judges]]
name = "j"
model = "tiny-b"
server = "box"
[[scoring.judges]]
name = "hosted"
model = "Tiny-A"
url = "https://api.example.com/v1"
`)
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "b.toml"), []byte("[[tests]]\nid = \"t\"\nuser = \"hi\"\ncriteria = \"says hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, p, Overrides{}, noEnv)
	if got := c.Scoring.Judges[0].Model; got != "tiny-b:latest" {
		t.Errorf("the fleet judge's model is %q, want the tested model's spelling tiny-b:latest", got)
	}
	if got := c.Scoring.Judges[1].Model; got != "Tiny-A" {
		t.Errorf("the hosted judge's model is %q, want its own Tiny-A", got)
	}
}

// Judge mode with two judges says which one decides: the second would
// otherwise go unused without a word.
func TestJudgeModeWithTwoJudgesSaysWhichDecides(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, `
battery = "b.toml"
models = ["m1"]
[scoring]
mode = "judge"
[[servers]]
name = "s"
kind = "sim"
models = ["m1", "j1", "j2"]
[[scoring.judges]]
name = "first"
model = "j1"
server = "s"
[[scoring.judges]]
name = "second"
model = "j2"
server = "s"
`)
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "b.toml"), []byte("[[tests]]\nid = \"t\"\nuser = \"hi\"\ncriteria = \"says hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, p, Overrides{}, noEnv)
	found := false
	for _, w := range c.Warnings {
		found = found || strings.Contains(w, "first decides") && strings.Contains(w, `mode = "jury"`)
	}
	if !found {
		t.Errorf("warnings %q; want one saying first decides", c.Warnings)
	}
}
