package importrun

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"pitwall/gpu/chat"
)

// readInspect reads an inspect eval log written as JSON:
//
//	{"version", "status", "eval": {"task", "model", "created"},
//	 "samples": [{"id", "epoch", "output": {"model", "choices": [{"message":
//	   {"content", "tool_calls": [{"id", "function", "arguments"}]}}],
//	   "usage": {"input_tokens", "output_tokens"}, "time", "error"},
//	   "scores": {name: {"value", "explanation"}}, "error": {"message"}}]}
//
// The log's model is the one column; a sample's epoch (from 1) is its
// repeat. A sample is the battery's test of the same id; a sample whose
// integer id the battery lacks is the test at that place (inspect numbers
// samples from 1 when its dataset gives them no id). The reply is the
// output's first choice: its text (text parts of a list of contents;
// reasoning parts are left out) and its tool calls. A sample that ended
// in an error is a ⚠️ cell; its scores are inspect's verdict (C pass, I
// fail, or a number: 1 pass, 0 fail), which pitwall does not take.
func readInspect(top obj) (*Source, error) {
	ev, _, err := top.object("eval")
	if err != nil {
		return nil, err
	}
	samples, err := top.list("samples")
	if err != nil {
		return nil, err
	}
	var n notes
	model, err := ev.str("model")
	if err != nil {
		return nil, err
	}
	src := &Source{Format: "inspect eval log"}
	if created, _ := ev.str("created"); created != "" {
		src.RanAt, _ = time.Parse(time.RFC3339, created)
	}
	if st, _ := top.str("status"); st != "" && st != "success" {
		n.add(fmt.Sprintf("the log's status is %q: samples it does not hold are ⊘ cells", st))
	}
	tests := map[string]int{}
	maxEpoch := 1
	for i, v := range samples {
		s, err := asObj(v, fmt.Sprintf("samples[%d]", i))
		if err != nil {
			return nil, err
		}
		id, err := s.id("id")
		if err != nil {
			return nil, err
		}
		id = strings.TrimSpace(id)
		if id == "" {
			id = strconv.Itoa(i + 1)
		}
		epoch, err := s.count("epoch")
		if err != nil {
			return nil, err
		}
		epoch = max(epoch, 1)
		if epoch > MaxRepeat {
			return nil, &limitError{"runs per cell", epoch, MaxRepeat}
		}
		if _, ok := tests[id]; !ok {
			tests[id] = len(src.Tests)
			ref := TestRef{ID: id, Pos: -1}
			if k, err := strconv.Atoi(id); err == nil && k >= 1 {
				ref.Pos = k - 1
			}
			src.Tests = append(src.Tests, id)
			src.Refs = append(src.Refs, ref)
			if len(src.Tests) > MaxTests {
				return nil, &limitError{"tests", len(src.Tests), MaxTests}
			}
		}
		res, outModel, err := inspectSample(s)
		if err != nil {
			return nil, err
		}
		if model == "" {
			model = outModel
		}
		res.Test, res.Repeat = id, epoch-1
		maxEpoch = max(maxEpoch, epoch)
		src.Results = append(src.Results, res)
	}
	if model = strings.TrimSpace(model); model == "" {
		return nil, fmt.Errorf("%s: the log names no model (eval.model)", ev.at)
	}
	src.Models, src.Repeat = []string{model}, maxEpoch
	for i := range src.Results {
		src.Results[i].Model = model
	}
	if err := checkShape(1, len(src.Tests), src.Repeat); err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		n.add("the log holds no samples (written with --no-log-samples?): there is nothing to import")
	}
	n.add("inspect's scores are not taken as verdicts: pitwall runs the battery's checks on each reply again")
	src.Notes = n.list()
	return src, nil
}

// inspectSample reads one sample's reply, error and score.
func inspectSample(s obj) (Result, string, error) {
	var res Result
	out, _, err := s.object("output")
	if err != nil {
		return res, "", err
	}
	model, _ := out.str("model")
	if e, ok, err := s.object("error"); err != nil {
		// An older log may keep the error as text.
		if msg, serr := s.str("error"); serr == nil {
			res.Outcome, res.Error = Errored, firstOf(msg, "inspect recorded an error")
			return res, model, nil
		}
		return res, "", err
	} else if ok {
		msg, _ := e.str("message")
		res.Outcome, res.Error = Errored, firstOf(msg, "inspect recorded an error and no message")
		return res, model, nil
	}
	if out.m != nil {
		if msg, _ := out.str("error"); msg != "" {
			res.Outcome, res.Error = Errored, msg
			return res, model, nil
		}
		secs, _, err := out.num("time")
		if err != nil {
			return res, "", err
		}
		res.Latency = millis(secs * 1000)
		if use, ok, _ := out.object("usage"); ok {
			in, _, _ := use.num("input_tokens")
			outTok, _, _ := use.num("output_tokens")
			res.PromptTokens, res.CompletionTokens = tokens(in), tokens(outTok)
		}
		if res.Output, res.ToolCalls, err = inspectChoice(out); err != nil {
			return res, "", err
		}
	}
	res.Outcome = Answered
	res.Verdict, res.Why = inspectVerdict(s)
	return res, model, nil
}

// inspectChoice reads the first choice's message, or the output's
// completion text when it has no choices.
func inspectChoice(out obj) (string, []chat.ToolCall, error) {
	choices, err := out.list("choices")
	if err != nil {
		return "", nil, err
	}
	if len(choices) == 0 {
		text, err := out.str("completion")
		return text, nil, err
	}
	c, err := asObj(choices[0], out.field("choices[0]"))
	if err != nil {
		return "", nil, err
	}
	msg, _, err := c.object("message")
	if err != nil {
		return "", nil, err
	}
	var text string
	switch content := msg.m["content"].(type) {
	case nil:
	case string:
		text = content
	case []any:
		var parts []string
		for _, p := range content {
			if m, ok := p.(map[string]any); ok && m["type"] == "text" {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		text = strings.Join(parts, "\n")
	default:
		return "", nil, msg.wrong("content", content, "a string or a list of contents")
	}
	calls, err := msg.list("tool_calls")
	if err != nil {
		return "", nil, err
	}
	var out2 []chat.ToolCall
	for i, v := range calls {
		tc, ok := callObject(v)
		if !ok {
			return "", nil, fmt.Errorf("%s[%d]: a tool call needs a function name", msg.field("tool_calls"), i)
		}
		out2 = append(out2, tc)
	}
	return text, out2, nil
}

// inspectVerdict reads the first score that says pass or fail.
func inspectVerdict(s obj) (verdict, why string) {
	scores, ok, _ := s.object("scores")
	if !ok {
		return "", ""
	}
	for _, name := range slices.Sorted(maps.Keys(scores.m)) {
		sc, ok, _ := scores.object(name)
		if !ok {
			continue
		}
		expl, _ := sc.str("explanation")
		switch v := sc.m["value"].(type) {
		case string:
			switch strings.ToUpper(v) {
			case "C":
				return VerdictPass, ""
			case "I":
				return VerdictFail, expl
			}
		case bool:
			if v {
				return VerdictPass, ""
			}
			return VerdictFail, expl
		default:
			if f, ok, _ := sc.num("value"); ok {
				if f >= 1 {
					return VerdictPass, ""
				}
				if f == 0 {
					return VerdictFail, expl
				}
			}
		}
	}
	return "", ""
}
