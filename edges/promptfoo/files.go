package promptfoo

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pitwall/config"
)

// readVarFiles replaces file:// var values with the file's content: text as
// it is, .json and .yaml parsed, as promptfoo loads them.
func (b *pfBase) readVarFiles(vars map[string]any, at string) {
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		s, ok := vars[k].(string)
		ref, isFile := strings.CutPrefix(strings.TrimSpace(s), "file://")
		if !ok || !isFile {
			continue
		}
		v, err := pfDataFile(b.file, ref)
		if err != nil {
			b.col.Add(config.JoinPath(config.JoinPath(at, "vars"), k), "the path is relative to the promptfoo config", "%v", err)
			continue
		}
		vars[k] = v
	}
}

// maxScriptBytes caps what pitwall reads from a file:// reference: a
// prompt, a var, a script. These are written by hand; a larger file is not
// one of them.
const maxScriptBytes = 1 << 20

// pfFile reads a file:// reference relative to the config, through
// config's ReadRef: a file outside the config's folder is refused unless
// the pitwall config allows it.
func pfFile(cfg config.File, ref string) ([]byte, string, error) {
	if strings.ContainsAny(ref, "*?[") {
		return nil, ref, fmt.Errorf("file://%s: globs are not read; name one file", ref)
	}
	data, p, err := cfg.ReadRef(ref)
	switch {
	case config.IsOutside(err):
		return nil, p, err
	case errors.Is(err, os.ErrNotExist):
		return nil, p, fmt.Errorf("file://%s: no such file (looked for %s)", ref, p)
	case err != nil:
		return nil, p, fmt.Errorf("file://%s: %v", ref, err)
	case len(data) > maxScriptBytes:
		return nil, p, fmt.Errorf("file://%s is more than %d KiB", ref, maxScriptBytes>>10)
	}
	return data, p, nil
}

// pfDataFile reads a var's file: text, or parsed JSON or YAML.
func pfDataFile(cfg config.File, ref string) (any, error) {
	data, p, err := pfFile(cfg, ref)
	if err != nil {
		return nil, err
	}
	syntax := map[string]string{".json": "json", ".yaml": "yaml", ".yml": "yaml"}[strings.ToLower(filepath.Ext(p))]
	if err := config.CheckNesting(p, data, syntax); err != nil {
		return nil, fmt.Errorf("file://%s: %w", ref, err)
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".json":
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("file://%s is not JSON: %s", ref, config.JSONDecodeError(p, data, 0, err).Msg)
		}
		return v, nil
	case ".yaml", ".yml":
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("file://%s: YAML: %s", ref, yamlMessage(err))
		}
		return config.JSONNormalize(v), nil
	case ".js", ".cjs", ".mjs", ".py", ".rb":
		return nil, fmt.Errorf("file://%s: vars computed by scripts are not run; write the value, or its file's text", ref)
	}
	return string(data), nil
}

// pfPromptFile reads a prompt file: text, or a JSON chat (kept as its text,
// which the renderer reads as messages).
func pfPromptFile(cfg config.File, ref string) (string, error) {
	data, p, err := pfFile(cfg, ref)
	if err != nil {
		return "", err
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".txt", ".md", ".json", ".j2", ".prompt", "":
		return string(data), nil
	}
	return "", fmt.Errorf("file://%s: only text, Markdown and JSON chat prompts are read (not scripts or YAML)", ref)
}
