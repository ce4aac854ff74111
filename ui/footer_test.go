package ui

import (
	"pitwall/runner/state"
	"slices"
	"strings"
	"testing"
)

// footer is the last line on screen.
func footer(m *model) string {
	lines := strings.Split(drawn(m), "\n")
	return lines[len(lines)-1]
}

func TestFooterFitsWholeKeys(t *testing.T) {
	t.Parallel()
	scenes := []struct {
		name string
		run  func() *state.BatteryRun
		keys []string
	}{
		{name: "running", run: sceneMidInference},
		{name: "judged", run: sceneJudged},
		{name: "filtered", run: sceneJudged, keys: []string{"/", "g", "e", "m", "enter"}},
		{name: "detail", run: sceneJudged, keys: []string{"enter"}},
		{name: "compare", run: sceneJudged, keys: []string{"c"}},
	}
	every := map[string]bool{} // as drawn, and as --ascii draws it
	for _, b := range slices.Concat(defaultGridKeyMap().ShortHelp(), defaultDetailKeyMap().ShortHelp(), defaultCompareKeyMap().ShortHelp()) {
		item := b.Help().Key + " " + b.Help().Desc
		every[item], every[asciiFold.Replace(item)] = true, true
	}
	for _, sc := range scenes {
		for _, ascii := range []bool{false, true} {
			for _, w := range []int{60, 80, 100, 120, 200} {
				m := testModel(w, 30, Options{ASCII: ascii}, newFakeCtrl(nil))
				show(m, sc.run())
				press(m, sc.keys...)
				got := footer(m)
				sep, end := " • ", " • ? help • q quit"
				if ascii {
					sep, end = " | ", " | ? help | q quit"
				}
				if !strings.HasSuffix(got, end) {
					t.Errorf("%s at %d: footer does not end with %q: %q", sc.name, w, end, got)
				}
				for _, item := range strings.Split(strings.TrimPrefix(got, " "), sep) {
					if !every[item] {
						t.Errorf("%s at %d: footer has %q, not a whole key: %q", sc.name, w, item, got)
					}
				}
			}
		}
	}
}

func TestFooterDropsLeastNeededKeysFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		w    int
		want string
	}{
		// J is there with one judge: it can put none in view.
		{120, " enter detail • s stop • r re-judge • J judge • c compare • t figures • / filter • f status • e export • ? help • q quit"},
		{100, " enter detail • s stop • r re-judge • J judge • / filter • f status • e export • ? help • q quit"},
		{80, " enter detail • s stop • r re-judge • J judge • / filter • ? help • q quit"},
		{60, " enter detail • s stop • / filter • ? help • q quit"},
	}
	for _, tt := range tests {
		m := testModel(tt.w, 30, Options{}, newFakeCtrl(nil))
		show(m, sceneMidInference())
		if got := footer(m); got != tt.want {
			t.Errorf("at %d columns the footer is\n%q, want\n%q", tt.w, got, tt.want)
		}
	}
}

func TestFooterHidesKeysThatCannotAct(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		run     func() *state.BatteryRun
		ctrl    bool
		keys    []string
		want    []string
		wantNot []string
	}{
		{name: "a finished run cannot stop", run: sceneJudged, ctrl: true,
			want: []string{"r re-judge", "J judge", "e export"}, wantNot: []string{"s stop"}},
		{name: "a run going on can", run: sceneMidInference, ctrl: true, want: []string{"s stop"}},
		{name: "show of a finished run, browse only", run: sceneJudged,
			want: []string{"enter detail", "/ filter"}, wantNot: []string{"s stop", "r re-judge", "J judge", "e export"}},
		{name: "esc clears a filter while one is on", run: sceneJudged, ctrl: true, keys: []string{"/", "q", "enter"},
			want: []string{"esc clear filter"}},
		{name: "and is gone once it is off", run: sceneJudged, ctrl: true, keys: []string{"/", "q", "enter", "esc"},
			wantNot: []string{"esc clear filter"}},
		{name: "nothing to browse before the first snapshot", run: func() *state.BatteryRun { return nil }, ctrl: true,
			want: []string{"? help"}, wantNot: []string{"enter", "/ filter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ctrl Controller
			if tt.ctrl {
				ctrl = newFakeCtrl(nil)
			}
			m := testModel(200, 30, Options{}, ctrl)
			if run := tt.run(); run != nil {
				show(m, run)
			}
			press(m, tt.keys...)
			got := footer(m)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("footer lacks %q: %q", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("footer has %q: %q", w, got)
				}
			}
		})
	}
}

func TestHelpSaysEscClearsTheFilter(t *testing.T) {
	t.Parallel()
	m := testModel(120, 50, Options{}, newFakeCtrl(nil))
	show(m, sceneJudged())
	press(m, "?")
	got := drawn(m)
	for _, want := range []string{"esc    clear the / filter", "esc clears it"} {
		if !strings.Contains(got, want) {
			t.Errorf("help lacks %q:\n%s", want, got)
		}
	}
}

func TestFooterWhileTypingAFilter(t *testing.T) {
	t.Parallel()
	for _, w := range []int{60, 120} {
		m := testModel(w, 30, Options{}, newFakeCtrl(nil))
		show(m, sceneJudged())
		press(m, "/", "g", "e")
		got := footer(m)
		// The keys that edit the filter, and the one that still gets out.
		for _, want := range []string{"enter keep", "esc clear", "ctrl+u erase", "ctrl+c interrupt"} {
			if !strings.Contains(got, want) {
				t.Errorf("at %d the footer lacks %q while typing: %q", w, want, got)
			}
		}
		// t, x, f, e, q, ? and / type into the filter now.
		for _, gone := range []string{"figures", "transpose", "status", "export", "compare", "quit", "help", "/ filter"} {
			if strings.Contains(got, gone) {
				t.Errorf("at %d the footer lists %q, a key that types into the filter: %q", w, gone, got)
			}
		}
		press(m, "enter")
		if got := footer(m); !strings.Contains(got, "q quit") {
			t.Errorf("once the filter is kept the grid's keys are back: %q", got)
		}
	}
}
