// Package promptfoo reads promptfoo's YAML configs as pitwall batteries
// (prompts × tests, load.go and tests.go; assertions mapped onto checks,
// assert.go) and its judge-competence configs as judge batteries
// (judge.go). The mapping rules are in the comments of pfTest, assertion
// and loadPromptfooJudge.
//
// It is an edge: it imports the core (config, judge/check) and registers
// itself with config in init (register.go) as the format of .yaml and .yml
// batteries; nothing in the core imports it, and cli links it
// (cli/edges.go). It brings the YAML decoder, and links edges/jsassert,
// which runs the javascript assertions its batteries carry.
package promptfoo
