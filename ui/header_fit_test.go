package ui

import (
	"strings"
	"testing"
)

// At 80 columns a message keeps its whole text (the grid position gives
// way to it), and the progress line drops whole items rather than cut a
// figure in half.
func TestNarrowHeaderKeepsMessagesAndFiguresWhole(t *testing.T) {
	t.Parallel()
	m := testModel(80, 24, Options{}, newFakeCtrl(nil))
	show(m, sceneMidInference())
	path := "/tmp/review/pitwall-20261127-072755-abcd.md"
	m.say("exported to "+path, false)
	lines := strings.Split(drawn(m), "\n")
	if !strings.Contains(lines[2], "exported to "+path) {
		t.Errorf("the status line cuts the export's path:\n%s", lines[2])
	}
	progress := strings.TrimRight(lines[1], " ")
	if strings.HasSuffix(progress, "…") {
		t.Errorf("the progress line ends in a cut item: %q", progress)
	}
	for _, item := range strings.Split(progress, " · ")[1:] {
		if strings.HasPrefix(item, "ETA") && !strings.HasSuffix(item, "s") {
			t.Errorf("an ETA cut in half: %q in %q", item, progress)
		}
	}
}
