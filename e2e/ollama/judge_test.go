package ollama

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// judgedBattery is judged: a plain prompt, JSON mode (with an is-json check,
// so a cell cut mid-object fails its check and is not judged) and a tool
// (refused with a 400 for the two models without the tools capability, so
// those cells are errors and are not judged either). Every cell that
// completes goes to the judge.
const judgedBattery = `
[[tests]]
id = "story_judged"
category = "judged"
user = "Tell a two-sentence story about a fox."
criteria = "Two sentences, about a fox."

[[tests]]
id = "colours_judged"
category = "judged"
user = "List red, green and blue as JSON."
response_format = { type = "json_object" }
criteria = "A JSON object that lists red, green and blue."
  [[tests.checks]]
  type = "is-json"

[[tests]]
id = "weather_judged"
category = "judged"
user = "What's the weather in Paris?"
tool_choice = "auto"
criteria = "Calls get_weather for Paris."
  [[tests.tools]]
  type = "function"
    [tests.tools.function]
    name = "get_weather"
    description = "Current weather for a city"
    parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
`

const judgedTests = 3

// judgeMaxTokens keeps the judge's answers short: random weights never
// write a verdict line, so a longer answer only costs time, and one cut at
// its limit is the case whose J-ERR must say so.
const judgeMaxTokens = 8

// TestRunJudged runs judgedBattery on the three models, judged by tiny-b on
// the same Ollama (which holds one model at a time, so judging loads it
// unless it was tested last). The judge's answers are gibberish, so what is
// asserted is what must hold whatever it says: the judge requests reach
// Ollama, every completed cell gets a verdict or a judge error that says
// why, the run ends by itself with the exit code README gives for that
// outcome, and the export carries the judgments.
func TestRunJudged(t *testing.T) {
	requireOllama(t)
	const judgeModel = "tiny-b:latest"
	f := newFixture(t, configOpts{models: modelNames(), kind: "ollama", retries: 1,
		battery: judgedBattery, judge: judgeModel, judgeMaxTokens: judgeMaxTokens})
	ctx, cancel := stepContext(t, 4*time.Minute)
	defer cancel()
	logStart := logSize()
	r := pitwall(ctx, t, f.dir, "run", f.config, "--headless", "--db", f.db) // fails the test if it hangs
	posts := countLogLines(logStart, isChatPost)
	t.Logf("%s", r)

	e := exportLast(t, f)
	counts := checkAllTerminal(t, e, len(tinyModels)*judgedTests)
	t.Logf("cells by status %v\n%s", counts, cellTable(e))
	t.Logf("requests in the ledger (purpose model status error_class):\n%s", requestSummary(e))

	t.Run("judge requests reached Ollama", func(t *testing.T) {
		// Every request the server answered is one gin line in its log, so
		// the log's count is the ledger's: judge requests that never left
		// pitwall, or went elsewhere, would make the two differ.
		answered, judged := 0, 0
		for _, q := range e.Requests {
			if q.Status == "completed" || strings.HasPrefix(q.ErrorClass, "http_") {
				answered++
				if q.Purpose == "judge" {
					judged++
				}
			}
			if q.Purpose == "judge" && (q.Model != judgeModel || q.Judge != judgeName) {
				t.Errorf("judge request for %s × %s went to model %q as judge %q, want %s as %s", q.CandidateModel, q.Test, q.Model, q.Judge, judgeModel, judgeName)
			}
		}
		t.Logf("Ollama logged %d POST /v1/chat/completions during the run; the ledger has %d requests it answered, %d of them the judge's", posts, answered, judged)
		if judged == 0 {
			t.Fatalf("no judge request was answered by Ollama (cells completed: %d)", counts["completed"])
		}
		if posts != answered {
			t.Errorf("Ollama's log has %d chat requests during the run, the ledger %d answered ones", posts, answered)
		}
	})

	var jerr, verdicts int // judgments of completed cells: judge errors, and the rest
	for _, c := range e.Cells {
		if j, ok := c.Judgments[judgeName]; ok && c.Status == "completed" {
			if j.Verdict == "error" {
				jerr++
			} else {
				verdicts++
			}
		}
	}

	t.Run("every completed cell judged", func(t *testing.T) {
		if e.Judge != judgeName || len(e.Judges) != 1 || e.Judges[0] != judgeName {
			t.Errorf("export judge %q, judges %v; want %s and [%s]", e.Judge, e.Judges, judgeName, judgeName)
		}
		for _, c := range e.Cells {
			j, ok := c.Judgments[judgeName]
			switch {
			case c.Status != "completed":
				if ok {
					t.Errorf("%s × %s is %s but has a verdict of %s: only completed cells are judged", c.Model, c.Test, c.Status, judgeName)
				}
				continue
			case !ok:
				t.Errorf("%s × %s completed but the export has no judgment of %s", c.Model, c.Test, judgeName)
				continue
			}
			switch j.Verdict {
			case "pass", "fail", "warn":
			case "error":
				if why := judgeErrorWhy(e, c.Model, c.Test, c.Repeat, j.Error); why != "" {
					t.Errorf("%s × %s: J-ERR %q: %s", c.Model, c.Test, j.Error, why)
				}
			default:
				t.Errorf("%s × %s: verdict %q, want pass, fail, warn or error", c.Model, c.Test, j.Verdict)
			}
			if len(j.Samples) == 0 {
				t.Errorf("%s × %s: the export's judgment has no samples (the judge's raw answers)", c.Model, c.Test)
			}
		}
		t.Logf("%d verdicts, %d judge errors on %d completed cells", verdicts, jerr, counts["completed"])
	})

	t.Run("exit code", func(t *testing.T) {
		// README's exit codes, for the outcomes this run can have.
		notPassed := 0
		for _, c := range e.Cells {
			if j, ok := c.Judgments[judgeName]; c.Status != "completed" || !ok || j.Verdict != "pass" {
				notPassed++
			}
		}
		want, why := 0, "every cell passed"
		switch {
		case jerr > 0 && verdicts == 0:
			want, why = 2, "a judge needed but none usable: every verdict a judge error"
		case notPassed > 0:
			want, why = 1, fmt.Sprintf("%d cells failed, errored or were not passed by the judge", notPassed)
		}
		if r.code != want {
			t.Errorf("exit %d, want %d (%s)", r.code, want, why)
		}
		if e.Run.ExitCode == nil || *e.Run.ExitCode != r.code {
			t.Errorf("the export's run.exit_code is %v, want %d", e.Run.ExitCode, r.code)
		}
		if want == 2 {
			reason := fmt.Sprintf("judge %s gave no usable verdict", judgeName)
			if e.Run.Status != "failed" || !strings.Contains(e.Run.Message, reason) {
				t.Errorf("the export's run is %s %q; want failed, saying %q", e.Run.Status, e.Run.Message, reason)
			}
			if !strings.Contains(r.stdout+r.stderr, reason) {
				t.Errorf("the headless output does not say %q", reason)
			}
		}
	})
}

// judgeErrorWhy returns what is wrong with a J-ERR's message, or "": it
// must say why, and when the judge's answer used all of its max_tokens, it
// must say that it was cut there.
func judgeErrorWhy(e export, model, test string, repeat int, msg string) string {
	if strings.TrimSpace(msg) == "" {
		return "a judge error with no message"
	}
	for _, q := range e.Requests {
		if q.Purpose != "judge" || q.CandidateModel != model || q.Test != test || q.Repeat != repeat {
			continue
		}
		if q.Status == "completed" && q.CompletionTokens >= judgeMaxTokens {
			if want := fmt.Sprintf("cut at max_tokens %d", judgeMaxTokens); !strings.Contains(msg, want) {
				return fmt.Sprintf("the judge's answer used all %d tokens, but the error does not say %q", q.CompletionTokens, want)
			}
			return ""
		}
	}
	return ""
}
