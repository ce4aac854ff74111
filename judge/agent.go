package judge

import (
	"crypto/sha256"
	"encoding/hex"

	"pitwall/gpu/chat"
)

// RenderAgent is Render for a cell whose candidate is an agent's tool loop:
// the same template and blocks, with the trajectory (RenderTrajectory) as
// the candidate output in place of in.Reply and in.ToolCalls, which it
// ignores.
func RenderAgent(t Template, in Input, steps []Step) []chat.Message {
	in.Reply, in.ToolCalls = "", nil
	data := templateData(in)
	if len(steps) > 0 {
		data.Candidate = RenderTrajectory(steps)
	}
	user, err := execute(t, data)
	if err != nil {
		user = plainBlocks(data)
	}
	msgs := make([]chat.Message, 0, 2)
	if t.System != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: t.System})
	}
	return append(msgs, chat.Message{Role: "user", Content: user})
}

// agentKeyVersion sets an agent's keys apart from every CacheKey.
const agentKeyVersion = "pitwall-judge-agent-v1"

// AgentCacheKey is CacheKey for a cell judged by RenderAgent: every field
// of k but the reply, and the trajectory as the judge reads it.
func AgentCacheKey(k KeyInput, steps []Step) string {
	k.Input.Reply, k.Input.ToolCalls = "", nil
	h := sha256.New()
	for _, f := range []string{agentKeyVersion, CacheKey(k), RenderTrajectory(steps)} {
		writeField(h, f)
	}
	return hex.EncodeToString(h.Sum(nil))
}
