package judge

import "pitwall/gpu/chat"

// Input is what a judge sees of one cell.
type Input struct {
	System string
	Prompt string // the user turn(s), rendered
	Tools  []chat.Tool
	// Reply and ToolCalls are the candidate's answer as the server gave
	// it; RenderCandidate is how the judge gets to see them.
	Reply     string
	ToolCalls []chat.ToolCall
	Criteria  string
	Reference string
}
