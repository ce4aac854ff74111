package promptfoo

import (
	"gopkg.in/yaml.v3"

	"pitwall/config"
)

func init() {
	config.RegisterFormat(config.Format{
		Name:   "promptfoo",
		Exts:   []string{".yaml", ".yml"},
		Syntax: "yaml",
		Claims: isYAMLTable,
		Load: func(f config.File) ([]config.Test, error) {
			return loadPromptfoo(f)
		},
		LoadJudge: func(f config.File) ([]config.JudgeTest, error) {
			return loadPromptfooJudge(f)
		},
		IsJudge: isPromptfooJudgeBattery,
	})
}

// isYAMLTable claims a file of no known extension that is a YAML table:
// config has already found it is neither JSON nor TOML.
func isYAMLTable(f config.File) bool {
	var y any
	if err := yaml.Unmarshal(f.Data, &y); err != nil {
		return false
	}
	_, ok := y.(map[string]any)
	return ok
}
