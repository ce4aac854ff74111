package promptfoo

import (
	"encoding/json"
	"regexp"
	"strings"

	"pitwall/config"
)

// The templates promptfoo renders are Nunjucks. pitwall renders the part
// batteries use: {{ name }}, {{ name.field }} and the filters dump, safe,
// trim, upper and lower; anything else ({% if %}, other filters) is left
// as written and noted.
var (
	pfVar      = regexp.MustCompile(`\{\{\s*([A-Za-z_][\w.]*)\s*((?:\|\s*\w+\s*)*)\}\}`)
	pfTemplate = regexp.MustCompile(`\{%|\{\{`)
)

// render fills placeholders; unknown names are left as they are.
func (b *pfBase) render(s string, vars map[string]any, id string) string {
	out := pfRender(s, vars)
	if pfTemplate.MatchString(out) && pfTemplate.MatchString(s) {
		b.n.Add("template syntax pitwall does not render ({% … %}, a filter, or an unknown var) is sent as written", id)
	}
	return out
}

func pfRender(s string, vars map[string]any) string {
	return pfVar.ReplaceAllStringFunc(s, func(m string) string {
		sm := pfVar.FindStringSubmatch(m)
		v, ok := lookupVar(vars, sm[1])
		if !ok {
			return m
		}
		text := config.ValueText(v)
		for _, f := range strings.Split(sm[2], "|") {
			switch strings.TrimSpace(f) {
			case "":
			case "dump":
				b, err := json.Marshal(config.JSONNormalize(v))
				if err != nil {
					return m
				}
				text = string(b)
			case "safe":
			case "trim":
				text = strings.TrimSpace(text)
			case "upper":
				text = strings.ToUpper(text)
			case "lower":
				text = strings.ToLower(text)
			default:
				return m
			}
		}
		return text
	})
}

// lookupVar finds a dotted name in vars.
func lookupVar(vars map[string]any, name string) (any, bool) {
	var cur any = vars
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
