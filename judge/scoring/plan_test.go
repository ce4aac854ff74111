package scoring

import (
	"slices"
	"testing"
)

func TestNewPlanDecidesOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		mode    Mode
		judges  []string
		active  string
		want    Plan
		running []string
		choices []string
	}{
		{"no judges", "", nil, "", Plan{Mode: ModeDeterministic, Judging: TwoPhase}, nil, nil},
		{"one judge", "", []string{"a"}, "", Plan{Mode: ModeJudge, Judges: []string{"a"}, InView: "a", Judging: TwoPhase}, []string{"a"}, []string{"a"}},
		{"two judges make a jury", "", []string{"a", "b"}, "", Plan{Mode: ModeJury, Judges: []string{"a", "b"}, InView: JuryName, Judging: TwoPhase},
			[]string{"a", "b"}, []string{"a", "b", JuryName}},
		{"jury with a judge in view", ModeJury, []string{"a", "b"}, "b", Plan{Mode: ModeJury, Judges: []string{"a", "b"}, InView: "b", Judging: TwoPhase},
			[]string{"a", "b"}, []string{"a", "b", JuryName}},
		{"judge mode ignores the jury as active", ModeJudge, []string{"a", "b"}, JuryName, Plan{Mode: ModeJudge, Judges: []string{"a", "b"}, InView: "a", Judging: TwoPhase},
			[]string{"a"}, []string{"a", "b", JuryName}},
		{"checks alone with judges configured", ModeDeterministic, []string{"a"}, "", Plan{Mode: ModeDeterministic, Judges: []string{"a"}, Judging: TwoPhase}, nil, []string{"a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := NewPlan(tt.mode, tt.judges, tt.active, "")
			if got.Mode != tt.want.Mode || got.InView != tt.want.InView || got.Judging != tt.want.Judging || !slices.Equal(got.Judges, tt.want.Judges) {
				t.Fatalf("NewPlan = %+v, want %+v", got, tt.want)
			}
			if r := got.Running(); !slices.Equal(r, tt.running) {
				t.Errorf("Running = %v, want %v", r, tt.running)
			}
			if c := got.Choices(); !slices.Equal(c, tt.choices) {
				t.Errorf("Choices = %v, want %v", c, tt.choices)
			}
		})
	}
}

func TestPlanExpand(t *testing.T) {
	p := NewPlan("", []string{"a", "b"}, "", Pipelined)
	for _, tt := range []struct {
		name    string
		want    []string
		wantErr bool
	}{
		{"", []string{"a", "b"}, false},
		{JuryName, []string{"a", "b"}, false},
		{"b", []string{"b"}, false},
		{"c", nil, true},
	} {
		got, err := p.Expand(tt.name)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("Expand(%q) = %v, %v; want %v (error %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := NewPlan("", []string{"a"}, "", "").Expand(JuryName); err == nil {
		t.Error("a jury of one judge expanded")
	}
	if _, err := NewPlan("", nil, "", "").Expand(""); err == nil {
		t.Error("a plan with no judges expanded its judge in view")
	}
}
