package ui

import (
	"strings"
	"testing"

	"pitwall/runner/state"
)

// longID is a 200-character test id with no space to wrap at.
var longID = strings.Repeat("tool_call_with_nested_arguments_", 7)[:200]

// sceneLongID is sceneJudged with its first test's id 200 characters long.
func sceneLongID() *state.BatteryRun {
	run := sceneJudged()
	run.Tests = append([]state.TestInfo(nil), run.Tests...)
	run.Tests[0].ID = longID
	run.Tests[0].Prompt = "Call the tool."
	return run
}

func TestDetailShowsALongTestIDWhole(t *testing.T) {
	t.Parallel()
	m := testModel(100, 40, Options{}, newFakeCtrl(nil))
	show(m, sceneLongID())
	// The grid cuts it.
	if got := drawn(m); strings.Contains(got, longID) || !strings.Contains(got, longID[:20]) {
		t.Fatalf("the grid should cut the id with an ellipsis:\n%s", got)
	}
	press(m, "enter")
	lines := strings.Split(drawn(m), "\n")
	var joined strings.Builder
	for i, l := range lines {
		if !strings.HasPrefix(l, "Test ") {
			continue
		}
		// The id and what follows it, up to the model's line.
		for _, cont := range lines[i:] {
			if strings.HasPrefix(cont, "Model ") {
				break
			}
			joined.WriteString(strings.TrimRight(cont, " "))
		}
		break
	}
	if !strings.Contains(joined.String(), "Test "+longID) {
		t.Fatalf("the detail view does not show the id whole:\n%s", drawn(m))
	}
	for i, l := range lines {
		if w := m.c.wm.StringWidth(l); w > 100 {
			t.Errorf("line %d is %d wide: %q", i+1, w, l)
		}
	}
}
