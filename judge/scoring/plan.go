package scoring

import (
	"fmt"
	"slices"
)

// Mode is how a run is scored.
type Mode string

const (
	ModeDeterministic Mode = "deterministic" // checks alone
	ModeJudge         Mode = "judge"         // one judge in view
	ModeJury          Mode = "jury"          // every judge, aggregated
)

// Modes lists the modes a config may name.
func Modes() []Mode { return []Mode{ModeDeterministic, ModeJudge, ModeJury} }

// Judging is when phase 2 starts.
type Judging string

const (
	TwoPhase  Judging = "two-phase" // judge once every inference request has ended
	Pipelined Judging = "pipelined" // judge each cell as soon as its inference ends
)

// JuryName is the name under which a jury's aggregate verdict is kept and
// chosen, beside the judges' own names. Config rejects a judge of this name.
const JuryName = "jury"

// DefaultTemplate is the judge template a judge gets when it names none.
const DefaultTemplate = "rubric-v2"

// Plan is the one decision of which judges a run has and whose verdicts
// are in view. Config makes it (NewPlan), the ledger keeps what it was
// made from, and the runner, reopen, export and the UI read it; none of
// them decides it again.
type Plan struct {
	Mode    Mode     `json:"mode"`
	Judges  []string `json:"judges"`  // configured judges, in config order
	InView  string   `json:"in_view"` // a judge, JuryName, or "" (checks alone)
	Judging Judging  `json:"judging"`
	Samples int      `json:"samples"` // votes per judge per cell
}

// NewPlan decides a plan from what a config says: mode "" takes
// deterministic, judge or jury by the number of judges; active "" takes the
// first judge (judge mode) or the jury (jury mode). A deterministic plan
// has nothing in view even when judges are configured (--judge none).
func NewPlan(mode Mode, judges []string, active string, judging Judging) Plan {
	if mode == "" {
		switch len(judges) {
		case 0:
			mode = ModeDeterministic
		case 1:
			mode = ModeJudge
		default:
			mode = ModeJury
		}
	}
	if judging == "" {
		judging = TwoPhase
	}
	p := Plan{Mode: mode, Judges: slices.Clone(judges), Judging: judging}
	switch mode {
	case ModeJury:
		p.InView = JuryName
		if active != "" {
			p.InView = active
		}
	case ModeJudge:
		switch {
		case active != "" && active != JuryName:
			p.InView = active
		case len(judges) > 0:
			p.InView = judges[0]
		}
	}
	return p
}

// Choices are the names a user may put in view: the judges, then the jury
// when there are two or more.
func (p Plan) Choices() []string {
	out := slices.Clone(p.Judges)
	if len(p.Judges) >= 2 {
		out = append(out, JuryName)
	}
	return out
}

// Running is the judges whose verdicts a run produces from the start: all
// of them for a jury, the one in view for a judge, none for checks alone.
func (p Plan) Running() []string {
	switch {
	case p.Mode == ModeJury:
		return slices.Clone(p.Judges)
	case p.Mode == ModeJudge && p.InView != "":
		return []string{p.InView}
	}
	return nil
}

// Expand names the judges that produce the verdicts of name: "" is the one
// in view, JuryName is every judge, any other name is itself.
func (p Plan) Expand(name string) ([]string, error) {
	if name == "" {
		name = p.InView
	}
	switch {
	case name == "":
		return nil, fmt.Errorf("no judge is configured (scoring mode is %s)", ModeDeterministic)
	case name == JuryName && len(p.Judges) < 2:
		return nil, fmt.Errorf("a jury needs two or more judges")
	case name == JuryName:
		return slices.Clone(p.Judges), nil
	case !slices.Contains(p.Judges, name):
		return nil, fmt.Errorf("no judge named %q", name)
	}
	return []string{name}, nil
}

// WithInView returns the plan with name in view (a judge or the jury).
func (p Plan) WithInView(name string) Plan {
	p.Judges = slices.Clone(p.Judges)
	p.InView = name
	return p
}
