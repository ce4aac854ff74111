package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// promWriter writes the Prometheus text exposition format.
type promWriter struct {
	b strings.Builder
}

// family starts a metric family with its HELP and TYPE lines.
func (p *promWriter) family(name, typ, help string) {
	fmt.Fprintf(&p.b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// sample writes one sample; labels alternate names and values.
func (p *promWriter) sample(name string, v float64, labels ...string) {
	p.b.WriteString(name)
	if len(labels) > 0 {
		p.b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				p.b.WriteByte(',')
			}
			fmt.Fprintf(&p.b, "%s=%s", labels[i], strconv.Quote(labels[i+1]))
		}
		p.b.WriteByte('}')
	}
	p.b.WriteByte(' ')
	p.b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	p.b.WriteByte('\n')
}

func (p *promWriter) serve(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(p.b.String()))
}

// handleLlamaCppMetrics serves llama-server's --metrics endpoint.
func (s *Server) handleLlamaCppMetrics(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	e, c := s.gen.eng, &s.counters
	var prompt, predicted int64
	for _, v := range c.promptTokens {
		prompt += v
	}
	for _, v := range c.completionTokens {
		predicted += v
	}
	rate := 0.0
	if secs := c.decodeTime.Seconds(); secs > 0 {
		rate = float64(predicted) / secs
	}
	busy, queued := e.busy, len(e.queue)
	s.mu.Unlock()

	var p promWriter
	p.family("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.")
	p.sample("llamacpp:prompt_tokens_total", float64(prompt))
	p.family("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.")
	p.sample("llamacpp:tokens_predicted_total", float64(predicted))
	p.family("llamacpp:predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.")
	p.sample("llamacpp:predicted_tokens_seconds", rate)
	p.family("llamacpp:requests_processing", "gauge", "Number of requests processing.")
	p.sample("llamacpp:requests_processing", float64(busy))
	p.family("llamacpp:requests_deferred", "gauge", "Number of requests deferred.")
	p.sample("llamacpp:requests_deferred", float64(queued))
	p.serve(w)
}

// handleVLLMMetrics serves vLLM's /metrics, one series per served model.
func (s *Server) handleVLLMMetrics(w http.ResponseWriter, r *http.Request) {
	type row struct {
		name                  string
		running, waiting      int
		promptTotal, genTotal int64
	}
	s.mu.Lock()
	e := s.gen.eng
	kv := e.kvUsageLocked()
	rows := make([]row, 0, len(s.cfg.Models))
	for _, name := range s.cfg.Models {
		m := e.models[name]
		rows = append(rows, row{name, m.active, m.waiting, s.counters.promptTokens[name], s.counters.completionTokens[name]})
	}
	s.mu.Unlock()

	var p promWriter
	each := func(metric, typ, help string, v func(row) float64) {
		p.family(metric, typ, help)
		for _, r := range rows {
			p.sample(metric, v(r), "engine", "0", "model_name", r.name)
		}
	}
	each("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
		func(r row) float64 { return float64(r.running) })
	each("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
		func(r row) float64 { return float64(r.waiting) })
	each("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
		func(row) float64 { return kv })
	each("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
		func(r row) float64 { return float64(r.promptTotal) })
	each("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
		func(r row) float64 { return float64(r.genTotal) })
	p.serve(w)
}
