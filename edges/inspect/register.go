package inspect

import "pitwall/config"

func init() {
	config.RegisterFormat(config.Format{
		Name: "inspect",
		Records: &config.Records{
			Claims: isSample,
			Read:   readSample,
			Arrays: true,
		},
	})
}

// isSample claims an object with input: an inspect sample's prompt. No
// other format's test has it.
func isSample(m map[string]any) bool {
	_, ok := m["input"]
	return ok
}
