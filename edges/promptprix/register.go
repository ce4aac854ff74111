package promptprix

import "pitwall/config"

func init() {
	config.RegisterFormat(config.Format{
		Name:       "prompt-prix",
		ClaimsJSON: hasPrompts,
		Load:       loadJSON,
		Records: &config.Records{
			Claims: isPrompt,
			Read:   readPrompt,
			Lines:  true,
		},
	})
}

// hasPrompts claims {"prompts": [...]}, prompt-prix's JSON battery.
func hasPrompts(top map[string]any) bool {
	return top["prompts"] != nil
}

// isPrompt claims a lone object with user and no tests (a native battery's
// key). An object with input, question or function is another format's
// (edges/inspect's, edges/bfcl's) whatever else it holds. Arrays of prompts
// are not claimed: a prompt is written as a native test is, and a bare
// array of tests is native; a JSONL line that no format claims is a prompt
// (Lines).
func isPrompt(m map[string]any) bool {
	has := func(k string) bool { _, ok := m[k]; return ok }
	return has("user") && !has("tests") && !has("input") && !has("question") && !has("function")
}
