package bfcl

import "pitwall/config"

func init() {
	config.RegisterFormat(config.Format{
		Name: "BFCL",
		Records: &config.Records{
			Claims: isEntry,
			Read:   readEntry,
			Arrays: true,
		},
	})
}

// isEntry claims an object with question or function, BFCL's prompt and
// tools, unless it has input: that is an inspect sample's prompt, and
// edges/inspect reads such an object whatever else it holds.
func isEntry(m map[string]any) bool {
	has := func(k string) bool { _, ok := m[k]; return ok }
	return (has("question") || has("function")) && !has("input")
}
