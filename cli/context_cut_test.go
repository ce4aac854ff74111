package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A prompt longer than the model's context is cut by Ollama, which says
// so only by reporting prompt_tokens equal to the context: the cell is ⚠️
// prompt_cut, not a pass (the model never saw the whole test), and the
// summary says the prompt was cut, for that model only. With [run]
// accept_cut_prompts the checks decide, and the cell still says it.
func TestAPromptCutToTheModelsContextIsSaid(t *testing.T) {
	t.Parallel()
	for _, accept := range []bool{false, true} {
		t.Run(map[bool]string{false: "by default", true: "accepted"}[accept], func(t *testing.T) {
			t.Parallel()
			promptCut(t, accept)
		})
	}
}

func promptCut(t *testing.T, accept bool) {
	dir := t.TempDir()
	run := ""
	if accept {
		run = "[run]\naccept_cut_prompts = true\n"
	}
	long := strings.Repeat("Here is more of the long story to read. ", 60)
	files := map[string]string{
		"battery.toml": `
[[tests]]
id = "long"
user = "` + long + ` What is 2 plus 2? Only the number."
  [[tests.checks]]
  type = "contains"
  value = "4"
`,
		"pitwall.toml": `name = "cut"
battery = "battery.toml"
models = ["small-ctx", "big-ctx"]
db = '` + filepath.Join(dir, "ledger.db") + `'
` + run + `[sim]
time_scale = 0
[[sim.models]]
name = "small-ctx"
context = 64
[[sim.models]]
name = "big-ctx"
[[servers]]
name = "ollama0"
kind = "sim"
models = ["small-ctx", "big-ctx"]
  [servers.sim]
  backend = "ollama"
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := inproc(t, "run", filepath.Join(dir, "pitwall.toml"), "--headless", "--judge", "none")
	if code != 0 && code != 1 {
		t.Fatalf("run exited %d:\n%s\n%s", code, out, stderr)
	}
	var small, big string
	for _, l := range strings.Split(stderr+out, "\n") { // progress lines go to stderr
		switch {
		case strings.Contains(l, "small-ctx") && strings.Contains(l, "long"):
			small = l
		case strings.Contains(l, "big-ctx") && strings.Contains(l, "long"):
			big = l
		}
	}
	switch {
	case !accept && !strings.Contains(small, "⚠️ prompt_cut: the server cut the prompt to the model's context of 64 tokens"):
		t.Errorf("the cell of the model with a 64-token context is not ⚠️ prompt_cut: %q\n%s", small, out)
	case accept && (!strings.Contains(small, "prompt cut to 64 tokens") || strings.Contains(small, "⚠️")):
		t.Errorf("with cut prompts accepted, the cell of the model with a 64-token context: %q; want it checked and marked cut\n%s", small, out)
	}
	if big == "" || strings.Contains(big, "prompt cut") {
		t.Errorf("the cell of the model with room for the prompt: %q", big)
	}
	if !strings.Contains(out, "prompts cut to the model's context: 1 of inference, 0 of judging") {
		t.Errorf("the summary does not say a prompt was cut:\n%s", out)
	}
}
