package history

import (
	"maps"
	"slices"

	"pitwall/config"
	"pitwall/runner/ledger"
)

// Spend is what one share of a run's requests cost: inference, one tested
// model's inference, judging, or one judge's. What was paid for is what a
// server answered (or failed to answer): a request answered from the cache
// or from an identical request in flight (server "(cache)" / "(shared)")
// is counted, and adds nothing else.
type Spend struct {
	// Requests counts every row, each attempt of each cell; Cells the
	// cells (model, test, repeat) they were made for. Live counts those
	// sent to a server (answered, failed or cancelled after dispatch),
	// Cached and Shared those answered without one, and Abandoned those
	// never sent: given up after max_wait, stopped or cancelled while they
	// waited for a server. Requests = Live + Cached + Shared + Abandoned.
	Requests  int `json:"requests"`
	Cells     int `json:"cells"`
	Live      int `json:"live"`
	Cached    int `json:"cached"`
	Shared    int `json:"shared"`
	Abandoned int `json:"abandoned"`
	// Tokens of live requests, as their servers reported them.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// WallMS is how long at least one live request was in flight: the
	// union of their intervals, each its latency up to its end. It is the
	// time this share took of the run, were nothing else running beside it.
	WallMS int64 `json:"wall_ms"`
	// GPUMS is slot time: the sum of the live requests' latencies, each
	// measured from dispatch, while the request held a server slot. It is
	// larger than WallMS when requests ran side by side.
	GPUMS int64 `json:"gpu_ms"`
	// CostUSD is PromptTokens and CompletionTokens at the configured price
	// per million tokens (a judge's price_in / price_out, or [prices] of
	// the model); absent when nothing of this share is priced. For a total
	// it sums the priced parts, and Unpriced names those that used tokens
	// with no price.
	CostUSD  *float64 `json:"cost_usd,omitempty"`
	Unpriced []string `json:"unpriced,omitempty"`
}

// JudgeSpend is one judge's spend.
type JudgeSpend struct {
	Judge string `json:"judge"`
	Model string `json:"model"`
	Spend
}

// ModelSpend is one tested model's inference spend.
type ModelSpend struct {
	Model string `json:"model"`
	Spend
}

// ExportInference is the inference apart from judging: in all, and by
// tested model in the run's order.
type ExportInference struct {
	Spend
	Models []ModelSpend `json:"models"`
}

// ExportJudging is judging apart from inference: in all, and by judge in
// config order (judges that are no longer configured after them, by name).
type ExportJudging struct {
	Spend
	Judges []JudgeSpend `json:"judges"`
}

// Spending is a run's inference and judging, apart. Warm-ups and probes
// belong to neither.
type Spending struct {
	Inference ExportInference `json:"inference"`
	Judging   ExportJudging   `json:"judging"`
}

// RunSpending reads the spending of run id ("last" or a prefix) from the
// ledger, summed there: no request row is read into memory.
func RunSpending(led *ledger.Ledger, id string) (*Spending, error) {
	run, err := led.Run(id)
	if err != nil {
		return nil, err
	}
	usage, err := led.RunUsage(run.ID)
	if err != nil {
		return nil, err
	}
	return spending(run, usage), nil
}

// price is dollars per million prompt and completion tokens.
type price struct{ in, out float64 }

// spending splits usage into inference and judging and prices them from
// the run's config in the ledger.
func spending(run ledger.RunRow, usage []ledger.Usage) *Spending {
	var cfg struct {
		Prices map[string]config.Price `json:"prices"`
	}
	_ = decode(run.ConfigJSON, &cfg) // an old run's config has no prices: unpriced
	models := map[string]price{}
	for m, p := range cfg.Prices {
		models[m] = price{p.In, p.Out}
	}
	judges := map[string]price{}
	judgeModel := map[string]string{}
	var judgeOrder []string
	if sc, err := Scoring(run); err == nil {
		for _, j := range sc.Judges {
			judgeOrder = append(judgeOrder, j.Name)
			judgeModel[j.Name] = j.Model
			if j.PriceIn != 0 || j.PriceOut != 0 {
				judges[j.Name] = price{j.PriceIn, j.PriceOut}
			} else if p, ok := models[j.Model]; ok {
				judges[j.Name] = p
			}
		}
	}

	byModel := map[string]Spend{}
	byJudge := map[string]Spend{}
	var inference, judging Spend
	for _, u := range usage {
		switch {
		case u.Purpose == ledger.PurposeInference && u.All:
			inference = spendOf(u)
		case u.Purpose == ledger.PurposeInference:
			byModel[u.Key] = spendOf(u)
		case u.Purpose == ledger.PurposeJudge && u.All:
			judging = spendOf(u)
		case u.Purpose == ledger.PurposeJudge:
			byJudge[u.Key] = spendOf(u)
			if judgeModel[u.Key] == "" {
				judgeModel[u.Key] = u.Model
			}
		}
	}

	s := &Spending{
		Inference: ExportInference{Spend: inference, Models: []ModelSpend{}},
		Judging:   ExportJudging{Spend: judging, Judges: []JudgeSpend{}},
	}
	modelOrder := slices.Clone(run.Models)
	for _, m := range slices.Sorted(maps.Keys(byModel)) {
		if !slices.Contains(modelOrder, m) {
			modelOrder = append(modelOrder, m)
		}
	}
	for _, m := range modelOrder {
		sp := byModel[m]
		p, ok := models[m]
		priceInto(&s.Inference.Spend, &sp, m, p, ok)
		s.Inference.Models = append(s.Inference.Models, ModelSpend{Model: m, Spend: sp})
	}
	for _, j := range slices.Sorted(maps.Keys(byJudge)) {
		if !slices.Contains(judgeOrder, j) {
			judgeOrder = append(judgeOrder, j)
		}
	}
	for _, j := range judgeOrder {
		sp := byJudge[j]
		p, ok := judges[j]
		priceInto(&s.Judging.Spend, &sp, j, p, ok)
		s.Judging.Judges = append(s.Judging.Judges, JudgeSpend{Judge: j, Model: judgeModel[j], Spend: sp})
	}
	// Unpriced parts are worth naming beside a cost only.
	for _, t := range []*Spend{&s.Inference.Spend, &s.Judging.Spend} {
		if t.CostUSD == nil {
			t.Unpriced = nil
		}
	}
	return s
}

// priceInto prices part (named name) at p when ok, and adds its cost to
// total, or names it among total's unpriced parts when it paid for tokens
// with no price.
func priceInto(total, part *Spend, name string, p price, ok bool) {
	if !ok {
		if part.PromptTokens+part.CompletionTokens > 0 {
			total.Unpriced = append(total.Unpriced, name)
		}
		return
	}
	c := (float64(part.PromptTokens)*p.in + float64(part.CompletionTokens)*p.out) / 1e6
	part.CostUSD = &c
	sum := c
	if total.CostUSD != nil {
		sum += *total.CostUSD
	}
	total.CostUSD = &sum
}

// spendOf is a share's usage as a Spend, unpriced.
func spendOf(u ledger.Usage) Spend {
	return Spend{Requests: u.Requests, Live: u.Live, Cached: u.Cached, Shared: u.Shared,
		Abandoned: u.Abandoned, Cells: u.Cells, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		WallMS: u.Wall.Milliseconds(), GPUMS: u.Slot.Milliseconds()}
}
