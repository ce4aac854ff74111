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

	// candidate is RenderCandidate of Reply and ToolCalls when rendered
	// says it was worked out (WithCandidate).
	candidate string
	rendered  bool
}

// WithCandidate is in with its candidate neutralised once, for Render and
// CacheKey to share: neutralising a reply is most of what preparing a
// judge request costs. Reply and ToolCalls must not change after it.
func (in Input) WithCandidate() Input {
	in.candidate, in.rendered = RenderCandidate(in.Reply, in.ToolCalls), true
	return in
}

// candidateText is RenderCandidate of in's reply and tool calls.
func (in Input) candidateText() string {
	if in.rendered {
		return in.candidate
	}
	return RenderCandidate(in.Reply, in.ToolCalls)
}
