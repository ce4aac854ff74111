package config

import (
	"fmt"
	"maps"
	"net/url"
	"pitwall/gpu/chat"
	"pitwall/internal/redact"
	"pitwall/judge/scoring"
	"regexp"
	"slices"
	"strings"
)

// AnyServer as a judge's server lets every fleet server that offers the
// judge's model run its requests, rather than one.
const AnyServer = "any"

var (
	serverKinds  = names(chat.Kinds())
	simBackends  = names(chat.Kinds()[:len(chat.Kinds())-1]) // every kind but sim itself
	scoringModes = names(scoring.Modes())
	aggregations = []string{"mean", "median", "majority", "min"}
	judgingModes = names([]scoring.Judging{scoring.TwoPhase, scoring.Pipelined})
	envName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// validate checks the decoded, overridden config. Shape problems (unknown
// keys, wrong types) were reported by checkShape; this checks values and
// how sections refer to each other.
func validate(c *Config) Errors {
	v := NewCollector(c.meta.src)
	if c.Battery == "" {
		v.Add("battery", `add battery = "batteries/tools.toml"; the path is relative to this file`, "no battery given")
	}
	validateRun(v, &c.Run)
	validateServers(v, c.Servers)
	validateScoring(v, c)
	validateSim(v, c)
	validateModels(v, c)
	validatePrices(v, c.Prices)
	return v.Errs
}

func validateRun(v *Collector, r *Run) {
	if r.MaxWait < 0 {
		v.Add("run.max_wait", `write e.g. max_wait = "5m", or 0 to wait for ever`, "max_wait cannot be negative, got %s", r.MaxWait)
	}
	if r.Timeout <= 0 {
		v.Add("run.timeout", `write e.g. timeout = "300s"`, "timeout must be positive, got %s", r.Timeout)
	}
	if r.MaxTokens < 1 {
		v.Add("run.max_tokens", "max_tokens = 1024 is the default", "max_tokens must be at least 1, got %d", r.MaxTokens)
	}
	atMost(v, "run.max_tokens", int64(r.MaxTokens), maxTokens, "no model's context holds more; max_tokens = 1024 is the default")
	if r.MaxReplyBytes < 1024 {
		v.Add("run.max_reply_bytes", "max_reply_bytes = 8388608 (8 MiB) is the default and fits about 30,000 streamed tokens",
			"max_reply_bytes must be at least 1024, got %d", r.MaxReplyBytes)
	}
	atMost(v, "run.max_reply_bytes", r.MaxReplyBytes, maxReplyBytes,
		"each reply in flight may take this much memory; 8388608 (8 MiB) is the default, 268435456 (256 MiB) the most")
	if finite(v, "run.temperature", r.Temperature) && (r.Temperature < 0 || r.Temperature > 2) {
		v.Add("run.temperature", "OpenAI-compatible servers take 0 to 2; 0 makes runs repeatable", "temperature %g is out of range", r.Temperature)
	}
	if r.Repeat < 1 {
		v.Add("run.repeat", "repeat = 1 runs each cell once", "repeat must be at least 1, got %d", r.Repeat)
	}
	atMost(v, "run.repeat", int64(r.Repeat), maxRepeat, "every repeat is a row of cells held in memory; 1 to 10000")
	if r.Retries < 0 {
		v.Add("run.retries", "retries = 0 turns retrying off", "retries cannot be negative, got %d", r.Retries)
	}
	atMost(v, "run.retries", int64(r.Retries), maxRetries, "retries = 2 is the default")
	if !slices.Contains(judgingModes, string(r.Judging)) {
		v.Add("run.judging", DidYouMean(string(r.Judging), judgingModes), "unknown judging %q", r.Judging)
	}
}

func validateServers(v *Collector, servers []Server) {
	if len(servers) == 0 {
		v.Add("servers", `add a [[servers]] table with name and url, or kind = "sim" and models`, "no servers")
	}
	seen := map[string]int{}
	for i, s := range servers {
		at := func(k string) string { return JoinPath(IndexPath("servers", i), k) }
		switch first, dup := seen[s.Name]; {
		case s.Name == "":
			v.Add(at("name"), `add name = "gpu0"`, "server has no name")
		case s.Name == AnyServer:
			v.Add(at("name"), `choose another name: a judge's server = "any" means every server`, "%q is reserved", AnyServer)
		case dup:
			v.Add(at("name"), "give each server its own name",
				"duplicate server name %q (first at line %d)", s.Name, v.Src.Line(JoinPath(IndexPath("servers", first), "name")))
		default:
			seen[s.Name] = i
		}
		if s.Kind != "" && !slices.Contains(serverKinds, string(s.Kind)) {
			v.Add(at("kind"), DidYouMean(string(s.Kind), serverKinds), "unknown kind %q", s.Kind)
		}
		switch {
		case s.URL == "" && s.Kind != chat.KindSim:
			v.Add(at("url"), `add url = "http://127.0.0.1:1234/v1", or kind = "sim" for a simulated server`,
				"server %q has no url", s.Name)
		case s.URL != "":
			if msg := badURL(s.URL); msg != "" {
				v.Add(at("url"), `write e.g. url = "http://127.0.0.1:1234/v1"`, "%s", msg)
			} else if u, _ := url.Parse(s.URL); s.Kind == chat.KindSim && u.Port() == "" {
				v.Add(at("url"), `give it a port (url = "http://127.0.0.1:8101/v1"), or leave url out to get a free one`,
					"a sim server's url needs a port: %q has none", redact.URL(s.URL))
			} else if h := u.Hostname(); s.Kind == chat.KindSim && h != "localhost" && !strings.HasPrefix(h, "127.") {
				v.Add(at("url"), `use 127.0.0.1, or leave url out`, "a sim server listens on loopback only, not %q", h)
			}
		}
		if s.Slots < 1 {
			v.Add(at("slots"), "slots is how many requests the server runs at once: 1 or more", "slots must be at least 1, got %d", s.Slots)
		}
		atMost(v, at("slots"), int64(s.Slots), maxSlots, "slots is how many requests the server runs at once; the fleet keeps a table of them")
		if s.RPM < 0 {
			v.Add(at("rpm"), "rpm is the requests a minute the API allows: leave it out for none", "rpm must not be negative, got %d", s.RPM)
		}
		if s.TPM < 0 {
			v.Add(at("tpm"), "tpm is the tokens a minute the API allows: leave it out for none", "tpm must not be negative, got %d", s.TPM)
		}
		for k, g := range s.GPUs {
			if g < 0 {
				v.Add(IndexPath(at("gpus"), k), "GPU indices start at 0", "negative GPU index %d", g)
			}
		}
		checkKeyEnv(v, at("api_key_env"), s.APIKeyEnv)
		if s.Kind == chat.KindSim && len(s.Models) == 0 {
			v.Add(at("models"), `list the models it simulates: models = ["qwen3-8b"]`, "sim server %q lists no models", s.Name)
		}
		if s.Sim != nil {
			validateSimServer(v, at("sim"), s)
		}
	}
}

func validateSimServer(v *Collector, at string, s Server) {
	if s.Kind != chat.KindSim {
		v.Add(at, `set kind = "sim", or remove the [servers.sim] table`, "simulation settings on server %q, whose kind is not sim", s.Name)
	}
	if s.Sim.Backend != "" && !slices.Contains(simBackends, s.Sim.Backend) {
		v.Add(JoinPath(at, "backend"), DidYouMean(s.Sim.Backend, simBackends), "unknown backend %q", s.Sim.Backend)
	}
	for k, m := range s.Sim.Preload {
		if !slices.Contains(s.Models, m) {
			v.Add(IndexPath(JoinPath(at, "preload"), k), "preload only models the server lists in models", "preloads %q, which server %q does not offer", m, s.Name)
		}
	}
	if finite(v, JoinPath(at, "load_gbps"), s.Sim.LoadGBps) && s.Sim.LoadGBps < 0 {
		v.Add(JoinPath(at, "load_gbps"), "0 takes the default, 1 GB/s", "load_gbps cannot be negative, got %g", s.Sim.LoadGBps)
	}
	for k, g := range s.Sim.GPUs {
		field := JoinPath(IndexPath(JoinPath(at, "gpus"), k), "vram_gb")
		if finite(v, field, g.VRAMGB) && g.VRAMGB < 0 {
			v.Add(field, "0 takes the default, 24", "vram_gb cannot be negative, got %g", g.VRAMGB)
		}
	}
	f := s.Sim.Faults
	rates := map[string]float64{"error_rate": f.ErrorRate, "rate_limit_rate": f.RateLimitRate,
		"hang_rate": f.HangRate, "cut_rate": f.CutRate, "malformed_rate": f.MalformedRate}
	for _, name := range sortedKeys(rates) {
		if rate := rates[name]; finite(v, JoinPath(JoinPath(at, "faults"), name), rate) && (rate < 0 || rate > 1) {
			v.Add(JoinPath(JoinPath(at, "faults"), name), "a rate is a share of requests, 0 to 1", "%s %g is out of range", name, rate)
		}
	}
	if f.CrashAfter < 0 {
		v.Add(JoinPath(JoinPath(at, "faults"), "crash_after"), "0 means never", "crash_after cannot be negative")
	}
}

func validateScoring(v *Collector, c *Config) {
	s := &c.Scoring
	if !slices.Contains(scoringModes, string(s.Mode)) {
		v.Add("scoring.mode", DidYouMean(string(s.Mode), scoringModes), "unknown mode %q", s.Mode)
	}
	if s.Samples < 1 {
		v.Add("scoring.samples", "samples is votes per judge per cell: 1 or more", "samples must be at least 1, got %d", s.Samples)
	}
	atMost(v, "scoring.samples", int64(s.Samples), maxSamples, "samples is votes per judge per cell; each is a request")
	if finite(v, "scoring.min_score", s.MinScore) && (s.MinScore < 0 || s.MinScore > 1) {
		v.Add("scoring.min_score", "scores run from 0 to 1; min_score = 0.5 is the default", "min_score %g is outside 0..1", s.MinScore)
	}
	if !slices.Contains(aggregations, s.Aggregation) {
		v.Add("scoring.aggregation", DidYouMean(s.Aggregation, aggregations), "unknown aggregation %q", s.Aggregation)
	}
	if finite(v, "scoring.disagreement_threshold", s.DisagreementMax) && (s.DisagreementMax < 0 || s.DisagreementMax > 1) {
		v.Add("scoring.disagreement_threshold", "judges' scores run from 0 to 1, so does their spread; 0.3 is the default",
			"disagreement_threshold %g is outside 0..1", s.DisagreementMax)
	}
	switch {
	case s.Mode == scoring.ModeJudge && len(s.Judges) == 0:
		v.Add("scoring.mode", `add a [[scoring.judges]] table, or set mode = "deterministic"`, `mode "judge" but no judges`)
	case s.Mode == scoring.ModeJury && len(s.Judges) < 2:
		v.Add("scoring.mode", `a jury needs two or more judges: add one, or set mode = "judge"`,
			`mode "jury" with %d judge(s)`, len(s.Judges))
	}
	names := c.allJudgeNames()
	if s.Active != "" && !slices.Contains(names, s.Active) && !(s.Active == scoring.JuryName && s.Mode == scoring.ModeJury) {
		v.Add("scoring.active", DidYouMean(s.Active, names), "active names no judge: %q", s.Active)
	}
	servers := map[string]*Server{}
	var serverNames []string
	for i := range c.Servers {
		servers[c.Servers[i].Name] = &c.Servers[i]
		serverNames = append(serverNames, c.Servers[i].Name)
	}
	seen := map[string]int{}
	for i, j := range s.Judges {
		at := func(k string) string { return JoinPath(IndexPath("scoring.judges", i), k) }
		switch first, dup := seen[j.Name]; {
		case j.Name == "":
			v.Add(at("name"), `add name = "gemma"`, "judge has no name")
		case dup:
			v.Add(at("name"), "give each judge its own name",
				"duplicate judge name %q (first at line %d)", j.Name, v.Src.Line(JoinPath(IndexPath("scoring.judges", first), "name")))
		default:
			seen[j.Name] = i
		}
		if j.Model == "" {
			v.Add(at("model"), `add model = "google/gemma-3-12b"`, "judge %q has no model", j.Name)
		}
		switch {
		case j.Server == "" && j.URL == "":
			v.Add(at("server"), `name a fleet server (server = "gpu1", or "any" for every server that offers the model), or a hosted API (url = "https://...", api_key_env = "...")`,
				"judge %q names no server and no url", j.Name)
		case j.Server != "" && j.URL != "":
			v.Add(at("url"), "give server or url, not both", "judge %q names both a server and a url", j.Name)
		case j.Server == AnyServer:
			// Any fleet server that offers the model. Checked after discovery,
			// and here already when every server lists what it offers.
			if listed, offered := listedOffer(c.Servers, j.Model); listed && !offered && j.Model != "" {
				v.Add(at("model"), `add the model to a server's models, or correct the name`,
					"judge %q: no server offers model %q", j.Name, j.Model)
			}
		case j.Server != "":
			srv, ok := servers[j.Server]
			if !ok {
				v.Add(at("server"), DidYouMean(j.Server, serverNames), "judge %q names server %q, which is not in [[servers]]", j.Name, j.Server)
			} else if _, listed := chat.MatchModel(srv.Models, j.Model); len(srv.Models) > 0 && j.Model != "" && !listed {
				v.Add(at("model"), DidYouMean(j.Model, srv.Models), "server %q does not offer judge model %q", j.Server, j.Model)
			}
		default:
			if msg := badURL(j.URL); msg != "" {
				v.Add(at("url"), `write e.g. url = "https://api.openai.com/v1"`, "%s", msg)
			}
		}
		if finite(v, at("weight"), j.Weight) && !(j.Weight > 0) {
			v.Add(at("weight"), "weight = 1 is the default; a larger weight counts more in a jury", "weight must be above 0, got %g", j.Weight)
		}
		if j.MaxTokens < 1 {
			v.Add(at("max_tokens"), "max_tokens = 512 is the default", "max_tokens must be at least 1, got %d", j.MaxTokens)
		}
		atMost(v, at("max_tokens"), int64(j.MaxTokens), maxTokens, "no model's context holds more; max_tokens = 512 is the default")
		checkKeyEnv(v, at("api_key_env"), j.APIKeyEnv)
		checkPrice(v, at("price_in"), j.PriceIn)
		checkPrice(v, at("price_out"), j.PriceOut)
	}
}

// validatePrices checks [prices]: what each model costs per million tokens.
func validatePrices(v *Collector, prices map[string]Price) {
	models := slices.Sorted(maps.Keys(prices))
	for _, m := range models {
		checkPrice(v, JoinPath(JoinPath("prices", m), "price_in"), prices[m].In)
		checkPrice(v, JoinPath(JoinPath("prices", m), "price_out"), prices[m].Out)
	}
}

func checkPrice(v *Collector, at string, p float64) {
	if finite(v, at, p) && p < 0 {
		v.Add(at, "a price is dollars per million tokens, e.g. 0.15; 0 leaves it unpriced", "price must be 0 or more, got %g", p)
	}
}

func validateSim(v *Collector, c *Config) {
	if finite(v, "sim.time_scale", c.Sim.TimeScale) && !validScale(c.Sim.TimeScale) {
		v.Add("sim.time_scale", "1 is real time; 0.01 makes a 30s model load take 0.3s; 0 makes every delay zero", "time_scale must be 0 or more, got %g", c.Sim.TimeScale)
	}
	var simModels []string
	for _, s := range c.Servers {
		if s.Kind == chat.KindSim {
			simModels = append(simModels, s.Models...)
		}
	}
	seen := map[string]int{}
	for i, m := range c.Sim.Models {
		at := func(k string) string { return JoinPath(IndexPath("sim.models", i), k) }
		switch first, dup := seen[m.Name]; {
		case m.Name == "":
			v.Add(at("name"), `add name = "qwen3-8b"`, "simulated model has no name")
			continue
		case dup:
			v.Add(at("name"), "describe each model once", "duplicate simulated model %q (first at line %d)",
				m.Name, v.Src.Line(JoinPath(IndexPath("sim.models", first), "name")))
		default:
			seen[m.Name] = i
		}
		// An entry no sim server offers is most likely a typo, and its
		// settings would silently never apply.
		if !slices.Contains(simModels, m.Name) {
			v.Add(at("name"), DidYouMean(m.Name, simModels), "no sim server offers %q", m.Name)
		}
		unit := map[string]float64{"skill": m.Skill, "judge_error_rate": m.JudgeErrorRate}
		for k, s := range m.Skills {
			unit[JoinPath("skills", k)] = s
		}
		for _, k := range sortedKeys(unit) {
			if x := unit[k]; finite(v, at(k), x) && (x < 0 || x > 1) {
				v.Add(at(k), "a chance, from 0 to 1", "%s %g is outside 0..1", k, x)
			}
		}
		rates := map[string]float64{"size_gb": m.SizeGB, "tokens_per_sec": m.TokensPerSec, "prefill_tps": m.PrefillTPS}
		numbers := true
		for _, k := range sortedKeys(rates) {
			numbers = finite(v, at(k), rates[k]) && numbers
		}
		atMost(v, at("reply_tokens"), int64(m.ReplyTokens), maxSimReply, "a typical reply is 50 to 500 tokens; 0 takes the default, 120")
		if numbers && (m.SizeGB < 0 || m.TokensPerSec < 0 || m.PrefillTPS < 0 || m.TTFT < 0 || m.ReplyTokens < 0) {
			v.Add(IndexPath("sim.models", i), "sizes, rates and times cannot be negative (0 takes the default)",
				"simulated model %q has a negative setting", m.Name)
		}
	}
}

func validateModels(v *Collector, c *Config) {
	if len(c.meta.fileModels) == 0 {
		v.Add("models", `list the models to run: models = ["qwen3-8b", "gemma-3-12b"]`, "no models")
		return
	}
	for i, m := range c.meta.fileModels {
		k := slices.IndexFunc(c.meta.fileModels, func(o string) bool { return chat.ModelKey(o) == chat.ModelKey(m) })
		switch {
		case k < i && c.meta.fileModels[k] == m:
			v.Add(IndexPath("models", i), "list each model once", "model %q is listed twice", m)
		case k < i:
			v.Add(IndexPath("models", i), "list each model once, by one of its names",
				"model %q is %q again (a server matches both to one model: the run would test it twice)", m, c.meta.fileModels[k])
		}
	}
	// Only servers that list their models can be checked before discovery;
	// with any server that does not, CheckOffered decides after it.
	for _, m := range c.Models {
		listed, offered := listedOffer(c.Servers, m)
		if !listed {
			return
		}
		if !offered {
			v.Add(c.modelField(m), offerHint(m, c.Servers), "model %q is not offered by any server", m)
		}
	}
}

// listedOffer reports whether every server lists its models, so that the
// config alone can tell who offers model, and whether one of them offers
// it. Names match as the fleet matches them (chat.MatchModel, server by
// server).
func listedOffer(servers []Server, model string) (listed, offered bool) {
	listed = true
	for _, s := range servers {
		listed = listed && len(s.Models) > 0
		_, ok := chat.MatchModel(s.Models, model)
		offered = offered || ok
	}
	return listed, offered
}

// offerHint says what the servers offer, nearest name first.
func offerHint(model string, servers []Server) string {
	var all, parts []string
	for _, s := range servers {
		all = append(all, s.Models...)
		parts = append(parts, fmt.Sprintf("%s offers %s", s.Name, strings.Join(s.Models, ", ")))
	}
	hint := strings.Join(parts, "; ")
	if n := nearest(model, all); n != "" {
		hint = fmt.Sprintf("did you mean `%s`? ", n) + hint
	}
	return hint
}

// modelField is the field path of a model as the file lists it.
func (c *Config) modelField(model string) string {
	if c.meta != nil {
		if i := slices.Index(c.meta.fileModels, model); i >= 0 {
			return IndexPath("models", i)
		}
	}
	return "models"
}

func (c *Config) allJudgeNames() []string {
	names := make([]string, len(c.Scoring.Judges))
	for i, j := range c.Scoring.Judges {
		names[i] = j.Name
	}
	return names
}

// checkKeyEnv rejects an api_key_env that is not a variable name. The value
// is never echoed: when it is not a name it is most likely the key itself.
func checkKeyEnv(v *Collector, field, name string) {
	if name != "" && !envName.MatchString(name) {
		v.Add(field, `write the variable's NAME, e.g. api_key_env = "OPENAI_API_KEY", and export the key in it`,
			"api_key_env must name an environment variable, not hold a key")
	}
}

// badURL says what is wrong with a url, quoting it with its credentials
// masked: the message is printed and may be logged.
func badURL(raw string) string {
	s := redact.URL(raw)
	if !strings.Contains(s, "://") {
		return fmt.Sprintf("url %q must start with http:// or https://", s)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("url %q does not parse: %v", s, redact.Text(err.Error()))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("url %q must start with http:// or https://", s)
	}
	if u.Host == "" {
		return fmt.Sprintf("url %q has no host", s)
	}
	return ""
}

// names spells a list of typed words for hints and checks.
func names[T ~string](ws []T) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = string(w)
	}
	return out
}
