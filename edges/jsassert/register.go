package jsassert

import "pitwall/judge/check"

func init() { check.RegisterScriptEngine(engine{}) }

// engine is this package as judge/check's ScriptEngine.
type engine struct{}

func (engine) Compile(src string, module bool, function string) (check.Script, error) {
	p, err := Compile(src, module, function)
	if err != nil {
		return nil, err
	}
	return checkScript{p}, nil
}

// checkScript is a Program as a check.Script.
type checkScript struct{ p *Program }

func (s checkScript) Run(output any, context map[string]any, threshold *float64) (check.ScriptResult, error) {
	r, err := s.p.Run(Input{Output: output, Context: context}, threshold)
	return check.ScriptResult(r), err
}

func (engine) CompileTransform(src string, module bool, function string) (check.Transform, error) {
	p, err := CompileTransform(src, module, function)
	if err != nil {
		return nil, err
	}
	return checkTransform{p}, nil
}

// checkTransform is a Program as a check.Transform.
type checkTransform struct{ p *Program }

func (t checkTransform) Run(output any, context map[string]any) (any, error) {
	return t.p.Transform(Input{Output: output, Context: context})
}
