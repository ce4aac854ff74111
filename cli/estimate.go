package cli

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"pitwall/edges/qualify"
	"strconv"
	"strings"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// judgeEstimate is what a number of calls to one judge should cost, asked
// before they are sent (a re-judge, a qualification). Tokens are per call
// times calls, so an estimate, never a measurement: the question says "~".
type judgeEstimate struct {
	judge            string
	calls            int
	promptTokens     int // in all
	completionTokens int // in all
	cost             float64
	priced           bool   // cost is known: the judge or its model has a price
	hosted           bool   // the judge's requests go to a hosted API, which bills them
	where            string // the endpoint, for the question
}

func (e judgeEstimate) tokens() int { return e.promptTokens + e.completionTokens }

// perCall is a judge call's estimated prompt and completion tokens.
type perCall struct{ prompt, completion float64 }

// scaled fills e's tokens and cost for its calls at p tokens a call.
func (e *judgeEstimate) scaled(cfg *config.Config, j config.Judge, p perCall) {
	e.promptTokens = int(p.prompt*float64(e.calls) + 0.5)
	e.completionTokens = int(p.completion*float64(e.calls) + 0.5)
	if pr, ok := judgePrice(cfg, j); ok {
		e.cost = (float64(e.promptTokens)*pr.In + float64(e.completionTokens)*pr.Out) / 1e6
		e.priced = true
	}
	e.hosted, e.where = hostedJudge(cfg, j)
}

// judgePrice is what a judge's tokens cost: its own price_in/price_out, or
// [prices] of its model, as the export prices them (runner/history).
func judgePrice(cfg *config.Config, j config.Judge) (config.Price, bool) {
	if j.PriceIn != 0 || j.PriceOut != 0 {
		return config.Price{In: j.PriceIn, Out: j.PriceOut}, true
	}
	p, ok := cfg.Prices[j.Model]
	return p, ok
}

// hostedJudge reports whether a judge's requests go to a hosted API, one
// that bills by the token: a judge with a url, or one on a server of kind
// openai whose address is not on this machine or its network. Local
// servers (LM Studio, Ollama, llama.cpp, vLLM) and the simulator are not.
// A judge on "any" server is hosted when a hosted server offers its model.
func hostedJudge(cfg *config.Config, j config.Judge) (bool, string) {
	if j.Server == "" {
		return j.URL != "" && !localURL(j.URL), j.URL
	}
	for _, s := range cfg.Servers {
		if j.Server != config.AnyServer && s.Name != j.Server {
			continue
		}
		if _, offered := chat.MatchModel(s.Models, j.Model); j.Server == config.AnyServer && len(s.Models) > 0 && !offered {
			continue
		}
		if s.Kind == chat.KindOpenAI && !localURL(s.URL) {
			return true, s.URL
		}
	}
	return false, ""
}

// localURL reports whether u names this machine or a private network.
func localURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Hostname() == "" {
		return false
	}
	host := p.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}

// estimateRejudge estimates what judging refs again costs, per judge of
// names, with samples calls per judge per cell. A call costs:
//
//  1. the mean of that judge's earlier live requests in the run (what it
//     answered, not what the cache or a shared call did), when it has any;
//  2. else the mean of any judge's live requests in the run: the judges saw
//     the same cells;
//  3. else the judge template's text (4 characters a token) plus the
//     cells' inference prompt and completion tokens (the judge reads the
//     task and the reply), and the judge's max_tokens as its answer: a
//     ceiling, the one figure known before any judge has answered.
//
// reqs are the run's requests (ledger.Requests).
func estimateRejudge(cfg *config.Config, reqs []ledger.Request, refs []state.CellRef, names []string, samples int) []judgeEstimate {
	byJudge := map[string]*mean{}
	var anyJudge mean
	inference := map[state.CellRef]ledger.Request{}
	for _, q := range reqs {
		switch q.Purpose {
		case ledger.PurposeJudge:
			if !liveTokens(q) {
				continue
			}
			if byJudge[q.Judge] == nil {
				byJudge[q.Judge] = &mean{}
			}
			byJudge[q.Judge].add(q)
			anyJudge.add(q)
		case ledger.PurposeInference:
			if q.Status == ledger.StatusCompleted {
				// The newest completed attempt is the cell's answer.
				inference[state.CellRef{Test: q.Test, Model: q.Model, Repeat: q.Repeat}] = q
			}
		}
	}
	out := make([]judgeEstimate, 0, len(names))
	for _, name := range names {
		j, ok := cfg.Judge(name)
		if !ok {
			continue
		}
		e := judgeEstimate{judge: name, calls: len(refs) * max(samples, 1)}
		switch {
		case byJudge[name] != nil:
			e.scaled(cfg, j, byJudge[name].perCall())
		case anyJudge.n > 0:
			e.scaled(cfg, j, anyJudge.perCall())
		default:
			e.scaled(cfg, j, fromCells(j, refs, inference))
		}
		out = append(out, e)
	}
	return out
}

// liveTokens reports whether q is a judge request a server answered with
// token counts: the ones whose cost says what a call costs.
func liveTokens(q ledger.Request) bool {
	switch q.Server {
	case "", ledger.ServerCache, ledger.ServerShared:
		return false
	}
	return q.PromptTokens+q.CompletionTokens > 0
}

// mean is a running mean of requests' tokens.
type mean struct {
	n                  int
	prompt, completion int
}

func (m *mean) add(q ledger.Request) {
	m.n++
	m.prompt += q.PromptTokens
	m.completion += q.CompletionTokens
}

func (m mean) perCall() perCall {
	if m.n == 0 {
		return perCall{}
	}
	return perCall{float64(m.prompt) / float64(m.n), float64(m.completion) / float64(m.n)}
}

// fromCells is rule 3 of estimateRejudge: a call's tokens from the judge's
// template and the cells it reads.
func fromCells(j config.Judge, refs []state.CellRef, inference map[state.CellRef]ledger.Request) perCall {
	tpl, ok := judge.LookupTemplate(j.Template)
	if !ok {
		tpl, _ = judge.LookupTemplate("")
	}
	var cells float64
	for _, r := range refs {
		q := inference[r]
		cells += float64(q.PromptTokens + q.CompletionTokens)
	}
	if len(refs) > 0 {
		cells /= float64(len(refs))
	}
	return perCall{prompt: textTokens(tpl.System+tpl.User) + cells, completion: float64(j.MaxTokens)}
}

// textTokens is a text's tokens at about 4 characters a token, the usual
// rule for English under BPE tokenisers.
func textTokens(s string) float64 { return float64(len(s)) / 4 }

// estimateQualify estimates a qualification: every judge's requests, their
// prompts known (rendered), the answer at most the judge's max_tokens.
func estimateQualify(cfg *config.Config, jobs []*qualify.Job) []judgeEstimate {
	type acc struct {
		j      config.Judge
		calls  int
		prompt float64
	}
	var order []string
	by := map[string]*acc{}
	for _, qj := range jobs {
		a := by[qj.Judge.Name]
		if a == nil {
			a = &acc{j: qj.Judge}
			by[qj.Judge.Name] = a
			order = append(order, qj.Judge.Name)
		}
		a.calls++
		for _, m := range qj.Request.Messages {
			a.prompt += textTokens(m.Content)
		}
	}
	out := make([]judgeEstimate, 0, len(order))
	for _, name := range order {
		a := by[name]
		e := judgeEstimate{judge: name, calls: a.calls}
		e.scaled(cfg, a.j, perCall{prompt: a.prompt / float64(a.calls), completion: float64(a.j.MaxTokens)})
		out = append(out, e)
	}
	return out
}

// sumEstimates adds estimates up: tokens, and the cost when every one is
// priced.
func sumEstimates(es []judgeEstimate) (tokens int, cost float64, priced bool) {
	priced = len(es) > 0
	for _, e := range es {
		tokens += e.tokens()
		cost += e.cost
		priced = priced && e.priced
	}
	return tokens, cost, priced
}

// estimateLine says one judge's estimate: "strict (gpt-4o-mini, hosted at
// https://api.example.com/v1): 72 calls, ~43k tokens, ~$0.012".
func estimateLine(e judgeEstimate, model string) string {
	s := e.judge + " (" + model
	if e.hosted {
		s += ", hosted at " + serverWhere(chat.KindOpenAI, e.where)
	}
	s += "): " + plural(e.calls, "call") + ", ~" + shortCount(e.tokens()) + " tokens"
	if e.priced {
		s += ", ~" + dollars(e.cost)
	} else {
		s += ", no price configured (price_in/price_out)"
	}
	return s
}

// shortCount writes a count as 950, 12k or 1.2M.
func shortCount(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 10_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	case n < 1_000_000:
		return strconv.Itoa((n+500)/1000) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// dollars writes a cost to the cent, or to two significant digits below
// ten cents.
func dollars(c float64) string {
	d := 2
	for lim := 0.1; c > 0 && c < lim && d < 8; lim /= 10 {
		d++
	}
	return "$" + strconv.FormatFloat(c, 'f', d, 64)
}

// confirmSpend prints the estimate of the hosted judges' calls to stderr
// and, on a terminal (ask), asks before they are sent. It reports whether
// to go on: yes without a question when no judge is hosted, when --yes was
// given or when there is no terminal to ask on (CI).
func confirmSpend(es []judgeEstimate, models map[string]string, ask, yes bool, stdin io.Reader, stderr io.Writer) bool {
	var hosted []judgeEstimate
	for _, e := range es {
		if e.hosted {
			hosted = append(hosted, e)
		}
	}
	if len(hosted) == 0 {
		return true
	}
	fmt.Fprintln(stderr, "pitwall: estimated cost of the hosted judges' calls (tokens from what they cost before, or the prompts and max_tokens):")
	for _, e := range hosted {
		fmt.Fprintln(stderr, "  "+estimateLine(e, models[e.judge]))
	}
	if tokens, cost, priced := sumEstimates(hosted); len(hosted) > 1 {
		total := "  in all ~" + shortCount(tokens) + " tokens"
		if priced {
			total += ", ~" + dollars(cost)
		}
		fmt.Fprintln(stderr, total)
	}
	if yes || !ask {
		return true
	}
	fmt.Fprint(stderr, "Send them? [y/N] ")
	return readYes(stdin)
}

// readYes reads one answer line: y or yes, in any case, is yes.
func readYes(r io.Reader) bool {
	var line []byte
	b := make([]byte, 1)
	for len(line) < 64 {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		if err != nil {
			break
		}
	}
	a := strings.ToLower(strings.TrimSpace(string(line)))
	return a == "y" || a == "yes"
}

// estimator is the grid.s re-judge estimate (ui.Ledger.Estimate) for run
// runID: the judge's requests read from the ledger when the question is
// asked, the judge or jury expanded by the config's plan.
func estimator(cfg *config.Config, led *ledger.Ledger, runID string) func([]state.CellRef, string, int) (int, float64, bool, bool) {
	return func(refs []state.CellRef, judgeName string, samples int) (int, float64, bool, bool) {
		names, err := cfg.Plan().Expand(judgeName)
		if err != nil {
			return 0, 0, false, false
		}
		reqs, err := led.Requests(runID)
		if err != nil {
			return 0, 0, false, false
		}
		es := estimateRejudge(cfg, reqs, refs, names, samples)
		if len(es) == 0 {
			return 0, 0, false, false
		}
		tokens, cost, priced := sumEstimates(es)
		return tokens, cost, priced, true
	}
}
