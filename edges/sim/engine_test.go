package sim

import (
	"encoding/json"
	"math"
	"pitwall/gpu/simspec"
	"slices"
	"testing"
	"time"
)

func TestLMStudioEvictsTheLeastRecentlyUsedWhenVRAMIsShort(t *testing.T) {
	cfg := instant("a", "b", "c")
	cfg.Spec = simspec.Server{Backend: BackendLMStudio, GPUs: []simspec.GPU{{VRAMGB: 10}}}
	cfg.Catalog = map[string]simspec.Model{"a": {SizeGB: 4}, "b": {SizeGB: 4}, "c": {SizeGB: 4}}
	s := start(t, cfg)
	c := client(t)
	for _, m := range []string{"a", "b", "a"} { // b is now the least recently used
		complete(t, c, s, body(m, "hi", nil))
	}
	if st := s.State(); !slices.Equal(st.Resident, []string{"a", "b"}) || s.Stats().Evictions != 0 {
		t.Fatalf("before c: resident %v", st.Resident)
	}
	complete(t, c, s, body("c", "hi", nil))
	st, stats := s.State(), s.Stats()
	if !slices.Equal(st.Resident, []string{"a", "c"}) || stats.Evictions != 1 {
		t.Errorf("after c: resident %v, evictions %d; want b evicted", st.Resident, stats.Evictions)
	}
	if stats.Loads["a"] != 1 || stats.Loads["b"] != 1 || stats.Loads["c"] != 1 {
		t.Errorf("loads %v", stats.Loads)
	}
	_, out := get(t, c, s, "/api/v0/models")
	var lm struct{ Data []struct{ ID, State string } }
	if err := json.Unmarshal(out, &lm); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "loaded", "b": "not-loaded", "c": "loaded"}
	for _, d := range lm.Data {
		if want[d.ID] != d.State {
			t.Errorf("%s is %s, want %s", d.ID, d.State, want[d.ID])
		}
	}
}

func TestSlotsBoundConcurrencyAndTheRestQueue(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, Slots: 2, TimeScale: 1,
		Catalog: map[string]simspec.Model{"m": {TTFT: time.Hour}}} // requests that hold their slot until cancelled
	s := start(t, cfg)
	c := client(t)
	first := hold(t, c, s, body("m", "one", nil))
	defer first()
	waitState(t, s, "first running", func(st State) bool { return st.Busy == 1 })
	second := hold(t, c, s, body("m", "two", nil))
	defer second()
	waitState(t, s, "second running", func(st State) bool { return st.Busy == 2 })
	third := hold(t, c, s, body("m", "three", nil))
	defer third()
	waitState(t, s, "third queued", func(st State) bool { return st.Queue == 1 })

	_, out := get(t, c, s, "/sim/state")
	var st State
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatal(err)
	}
	if st.Busy != 2 || st.Queue != 1 || st.InFlight != 3 || st.Models["m"].Waiting != 1 || st.Models["m"].Active != 2 {
		t.Errorf("/sim/state %s", out)
	}

	first()
	st = waitState(t, s, "third takes the freed slot", func(st State) bool { return st.Queue == 0 && st.InFlight == 2 })
	if st.Busy != 2 || s.Stats().MaxBusy != 2 {
		t.Errorf("busy %d, max busy %d", st.Busy, s.Stats().MaxBusy)
	}
}

func TestALoadWaitsForTheStreamingModelItMustEvict(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"a", "b"}, Slots: 2, TimeScale: 1,
		Spec: simspec.Server{Backend: BackendLMStudio, GPUs: []simspec.GPU{{VRAMGB: 6}}, LoadGBps: 1e9},
		Catalog: map[string]simspec.Model{
			"a": {SizeGB: 4, TTFT: time.Hour}, // streams until cancelled
			"b": {SizeGB: 4, TTFT: time.Nanosecond, TokensPerSec: 1e9},
		}}
	s := start(t, cfg)
	c := client(t)
	releaseA := hold(t, c, s, body("a", "long", nil))
	defer releaseA()
	waitState(t, s, "a running", func(st State) bool { return st.Models["a"].Active == 1 })
	releaseB := hold(t, c, s, body("b", "short", nil))
	defer releaseB()
	st := waitState(t, s, "b waiting for a to drain", func(st State) bool { return st.Models["a"].Draining })
	if st.Models["a"].State != "loaded" || st.Models["b"].State != "not-loaded" || st.Models["b"].Active != 0 || st.Busy != 2 {
		t.Errorf("while a streams: %+v", st.Models)
	}
	releaseA()
	st = waitState(t, s, "b served", func(st State) bool { return st.Models["b"].Served == 1 })
	if !slices.Equal(st.Resident, []string{"b"}) || s.Stats().Evictions != 1 {
		t.Errorf("after a finished: resident %v, evictions %d", st.Resident, s.Stats().Evictions)
	}
}

func TestAModelBeingLoadedBlocksItsRequests(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, Slots: 2, TimeScale: 1,
		Spec: simspec.Server{Backend: BackendOllama, LoadGBps: 1e-6}} // a load that outlasts the test
	s := start(t, cfg)
	c := client(t)
	one := hold(t, c, s, body("m", "one", nil))
	defer one()
	two := hold(t, c, s, body("m", "two", nil))
	defer two()
	st := waitState(t, s, "both in", func(st State) bool { return st.Busy == 2 })
	if !slices.Equal(st.Loading, []string{"m"}) || st.Models["m"].Active != 0 || st.Decoding != 0 {
		t.Errorf("while loading: %+v", st)
	}
	_, out := get(t, c, s, "/api/ps")
	if string(out) != `{"models":[]}` {
		t.Errorf("a loading model in /api/ps: %s", out)
	}
}

func TestStreamRateSharesTheGPUSubLinearly(t *testing.T) {
	prevAgg, prevEach := 0.0, math.Inf(1)
	for n := 1; n <= 16; n++ {
		each := StreamRate(100, n)
		agg := each * float64(n)
		if agg <= prevAgg || each >= prevEach && n > 1 || agg > 100*float64(n) {
			t.Errorf("n=%d: per-stream %.2f, aggregate %.2f", n, each, agg)
		}
		prevAgg, prevEach = agg, each
	}
	if StreamRate(100, 1) != 100 || StreamRate(100, 0) != 100 {
		t.Error("a lone stream does not get the single-stream rate")
	}
	if got := StreamRate(100, 4); math.Abs(got-100*math.Pow(4, 0.7)/4) > 1e-9 {
		t.Errorf("StreamRate(100, 4) = %v", got)
	}
}

func TestGPUBusyIsTheSimulatedDecodeTime(t *testing.T) {
	cfg := instant("m")
	cfg.Spec.GPUs = []simspec.GPU{{}, {}}
	cfg.Catalog = map[string]simspec.Model{"m": {TokensPerSec: 100}}
	s := start(t, cfg)
	c := client(t)
	tokens := 0
	for i := range 3 {
		tokens += complete(t, c, s, body("m", "prompt "+itoa(i), nil)).Usage.CompletionTokens
	}
	stats := s.Stats()
	want := time.Duration(float64(tokens) / 100 * float64(time.Second))
	for i, b := range stats.GPUBusy {
		if d := b - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("GPU %d busy %v, want %v for %d tokens at 100/s", i, b, want, tokens)
		}
	}
	if stats.CompletionTokens != int64(tokens) || stats.Served["m"] != 3 || stats.Requests != 3 {
		t.Errorf("stats %+v", stats)
	}
}

func TestTelemetryWhileDecoding(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, Slots: 1, TimeScale: 1,
		Spec:    simspec.Server{Backend: BackendVLLM},
		Catalog: map[string]simspec.Model{"m": {TTFT: time.Nanosecond, TokensPerSec: 1e-6}}} // decodes until cancelled
	s := start(t, cfg)
	c := client(t)
	release := hold(t, c, s, body("m", "hi", map[string]any{"stream": true}))
	defer release()
	waitState(t, s, "decoding", func(st State) bool { return st.Decoding == 1 })
	g := s.GPUs()[0]
	if g.UtilizationGPU != 100 || g.PowerDrawW != maxPowerW || g.TemperatureGPU != maxTempC {
		t.Errorf("one stream on a one-slot server: %+v", g)
	}
	_, out := get(t, c, s, "/metrics")
	for _, want := range []string{`vllm:num_requests_running{engine="0",model_name="m"} 1` + "\n"} {
		if !contains(out, want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
	if contains(out, `vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0`+"\n") {
		t.Errorf("no KV cache in use while decoding:\n%s", out)
	}
	release()
	st := waitState(t, s, "stream ended", func(st State) bool { return st.InFlight == 0 })
	if st.Decoding != 0 || s.GPUs()[0].UtilizationGPU != 0 {
		t.Errorf("after: %+v", st)
	}
}

func TestConcurrentStreamsShareTheGPU(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, Slots: 4, TimeScale: 1,
		Catalog: map[string]simspec.Model{"m": {TTFT: time.Nanosecond, TokensPerSec: 1e-6}}} // decodes until cancelled
	s := start(t, cfg)
	c := client(t)
	for i := range 2 {
		release := hold(t, c, s, body("m", "hi", map[string]any{"stream": true}))
		defer release()
		waitState(t, s, "decoding", func(st State) bool { return st.Decoding == i+1 })
	}
	// Two of four slots decoding use (2/4)^0.7 of the batched throughput.
	if got := s.GPUs()[0].UtilizationGPU; got != 62 {
		t.Errorf("utilization %v, want 62", got)
	}
	if s.Stats().MaxDecoding != 2 {
		t.Errorf("max decoding %d", s.Stats().MaxDecoding)
	}
}

func TestTimeScaleChangesNoReply(t *testing.T) {
	scaled := Config{Name: "t", Models: []string{"m"}, TimeScale: 1e-4, Spec: simspec.Server{Backend: BackendLMStudio}}
	s1 := start(t, scaled)
	s2 := start(t, Config{Name: "t", Models: []string{"m"}, Instant: true, Spec: simspec.Server{Backend: BackendLMStudio}})
	c := client(t)
	req := body("m", "Describe a GPU.", map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}})
	_, ev1 := streamChat(t, c, s1, req)
	_, ev2 := streamChat(t, c, s2, req)
	a1, a2 := assemble(t, ev1), assemble(t, ev2)
	if !ev1.done || a1.content == "" || a1.content != a2.content || *a1.usage != *a2.usage {
		t.Errorf("scaled %q %+v\ninstant %q %+v", a1.content, a1.usage, a2.content, a2.usage)
	}
	if s1.Stats().Loads["m"] != 1 || s1.Stats().GPUBusy[0] != s2.Stats().GPUBusy[0] {
		t.Errorf("scaled stats %+v, instant %+v", s1.Stats(), s2.Stats())
	}
}
