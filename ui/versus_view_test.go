package ui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"pitwall/runner/state"
)

// versusOptions are Options that find others among runs, as the ledger
// would, and say which runs were listed and read.
func versusOptions(runs ...*state.BatteryRun) (Options, *[]string) {
	var asked []string
	return Options{Ledger: ledgerFuncs{
		otherRuns: func(run *state.BatteryRun) ([]string, error) {
			asked = append(asked, "list "+run.ID)
			var ids []string
			for _, r := range runs {
				if r.ID != run.ID && r.Name == run.Name {
					ids = append(ids, r.ID)
				}
			}
			return ids, nil
		},
		loadRun: func(id string) (*state.BatteryRun, error) {
			asked = append(asked, "load "+id)
			for _, r := range runs {
				if r.ID == id {
					return r, nil
				}
			}
			return nil, errors.New("no run " + id)
		},
	}}, &asked
}

func TestVersusKeyShowsTheCellInAnotherRun(t *testing.T) {
	t.Parallel()
	a, b := sceneVersus()
	older := sceneSide()
	older.ID = "20261120-080000-ef56"
	stranger := sceneSide()
	stranger.ID, stranger.Name = "20261123-080000-gh78", "another-battery"
	opts, asked := versusOptions(a, b, older, stranger)
	m := testModel(120, 30, opts, newFakeCtrl(nil))
	show(m, a)
	// The cursor on json_schema_reply × google/gemma-3-12b.
	press(m, "j", "l", "l")
	cmd := press(m, "V")
	if m.screen != screenGrid || len(*asked) != 0 {
		t.Fatalf("V should ask for the runs from a command, not in Update: screen %d, asked %v", m.screen, *asked)
	}
	run(m, cmd)
	if m.screen != screenVersus {
		t.Fatalf("the list of runs did not open:\n%s", drawn(m))
	}
	list := drawn(m)
	for _, want := range []string{b.ID, older.ID, "in which other run of"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, stranger.ID) {
		t.Errorf("a run of another battery is listed:\n%s", list)
	}
	golden(t, "versus_key_list_120", list)
	run(m, press(m, "enter"))
	if !slices.Equal(*asked, []string{"list " + a.ID, "load " + b.ID}) {
		t.Errorf("asked the ledger %v", *asked)
	}
	got := drawn(m)
	for _, want := range []string{"json_schema_reply × google/gemma-3-12b · J-ERR → PASS · is-json now passes",
		"run " + a.ID, "run " + b.ID} {
		if !strings.Contains(got, want) {
			t.Errorf("V's view lacks %q:\n%s", want, got)
		}
	}
	golden(t, "versus_key_120", got)
	press(m, "esc")
	if m.screen != screenGrid {
		t.Errorf("esc should close V, screen %d", m.screen)
	}
}

func TestVersusKeySaysWhyItCannot(t *testing.T) {
	t.Parallel()
	a, _ := sceneVersus()
	alone, _ := versusOptions(a)
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "no ledger at hand", want: "V: no ledger at hand to find other runs in; pitwall show RUN --vs OTHER compares two runs"},
		{name: "no other run", opts: alone, want: "V: the ledger has no other run of " + a.Name + " to compare with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(120, 30, tt.opts, newFakeCtrl(nil))
			show(m, a)
			run(m, press(m, "V"))
			if m.screen != screenGrid || m.message != tt.want {
				t.Errorf("screen %d, status %q; want %q", m.screen, m.message, tt.want)
			}
		})
	}
}
