package judge

import "pitwall/gpu/chat"

// Input is what a judge sees of one cell.
type Input struct {
	System    string
	Prompt    string // the user turn(s), rendered
	Tools     []chat.Tool
	Candidate string // the candidate's reply text, tool calls rendered after it
	Criteria  string
	Reference string
}
