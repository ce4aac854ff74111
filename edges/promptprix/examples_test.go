package promptprix_test

import (
	"path/filepath"
	"strings"
	"testing"

	"pitwall/config"
	_ "pitwall/edges/bfcl"
	_ "pitwall/edges/promptfoo"
)

// prompt-prix's own example files (testdata/prompt-prix/README.md names
// each one's commit) load as what they are: batteries as batteries, with
// the tests prompt-prix counts, and the judge battery as a judge battery.
func TestPromptPrixExampleFilesLoad(t *testing.T) {
	cases := []struct {
		file   string
		judge  bool
		tests  int
		agents int // tests that run prompt-prix's react loop
	}{
		{"compliance_decay_variants.json", false, 44, 0},
		{"file_categorization_eval.yaml", false, 4, 0},
		{"judge_eval_benchmark.yaml", false, 30, 0},
		{"react_file_categorization_benchmark.json", false, 5, 5},
		{"judge_competence_tests.promptfoo.yaml", false, 34, 0},
		// Its three PARTIAL verdicts have no place in a pass/fail judge battery.
		{"judge_competence_tests.promptfoo.yaml", true, 31, 0},
	}
	for _, tc := range cases {
		name := tc.file
		if tc.judge {
			name += " as a judge battery"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "prompt-prix", tc.file)
			var tests []config.Test
			if tc.judge {
				jts, err := config.LoadJudgeBattery(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, jt := range jts {
					tests = append(tests, jt.Test)
				}
			} else {
				var err error
				if tests, err = config.LoadBattery(path); err != nil {
					t.Fatal(err)
				}
			}
			if len(tests) != tc.tests {
				t.Errorf("%d tests, want %d", len(tests), tc.tests)
			}
			agents := 0
			for _, te := range tests {
				if te.ID == "" {
					t.Errorf("a test without an id: %+v", te)
				}
				if te.Mode == config.ModeAgent {
					agents++
				}
			}
			if agents != tc.agents {
				t.Errorf("%d agent tests, want %d", agents, tc.agents)
			}
		})
	}
}

// The files beside the batteries that are not batteries are refused with
// a message that says what they are, as prompt-prix refuses them.
func TestPromptPrixNonBatteriesAreNamed(t *testing.T) {
	cases := []struct{ file, want string }{
		{"judge_eval_ground_truth.json", "judge ground-truth file"},
		// No prompts key: prompt-prix's CustomJSONLoader refuses it as well.
		{"file_categorization_drift_tests.json", "file_categorization_drift_tests.json"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			_, err := config.LoadBattery(filepath.Join("testdata", "prompt-prix", tc.file))
			if err == nil {
				t.Fatal("loaded as a battery")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}
