package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/probe"
	"pitwall/internal/outfile"
	"pitwall/internal/redact"
	"pitwall/runner/state"
)

// usualPorts are where local OpenAI-compatible servers listen by default.
var usualPorts = []struct {
	port  int
	label string
}{
	{1234, "LM Studio"},
	{11434, "Ollama"},
	{8080, "llama.cpp"},
	{8000, "vLLM"},
}

// kindLabels name the kinds as people know the servers.
var kindLabels = map[chat.Kind]string{
	chat.KindLMStudio: "LM Studio", chat.KindOllama: "Ollama", chat.KindLlamaCpp: "llama.cpp",
	chat.KindVLLM: "vLLM", chat.KindOpenAI: "an OpenAI-compatible server",
}

func cmdInit(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("init", "pitwall init [--url URL...] [--force] [-o pitwall.toml]",
		"Looks for OpenAI-compatible servers on this machine (LM Studio on port 1234, Ollama 11434,\n"+
			"llama.cpp 8080, vLLM 8000) and at each --url, and writes a commented starter config with the\n"+
			"servers and kinds it found, the models each offers (named exactly as listed), their slots, a\n"+
			"judge suggestion (the largest model by its name), and a small starter battery beside it. When\n"+
			"no server answers, the config runs on pitwall's simulator until you point it at yours.\n"+
			"It never overwrites a file without --force. -o - prints the config to stdout (what init found goes\n"+
			"to stderr then); a device or FIFO is written to, and the battery then goes in the current folder.", stderr)
	var urls []string
	fs.Func("url", "also probe this server (http://host:port/v1); repeat or comma-separate", func(v string) error {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				urls = append(urls, u)
			}
		}
		return nil
	})
	force := fs.Bool("force", false, "overwrite the config and the starter battery if they exist")
	out := fs.String("o", "pitwall.toml", "the config file to write (- is stdout)")
	scan := fs.Bool("scan", true, "probe the usual local ports (--scan=false probes only --url)")
	timeout := fs.Duration("probe-timeout", 3*time.Second, "how long to wait for each server")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "pitwall init: unexpected %q: give servers with --url and the file with -o\n", pos[0])
		return state.ExitSetup
	}
	if *timeout <= 0 {
		return failf(stderr, fmt.Errorf("--probe-timeout %s: give a time to wait such as 3s", *timeout))
	}
	kind, err := outfile.Check(*out)
	if err != nil {
		return failf(stderr, fmt.Errorf("-o %w", err))
	}
	if kind == outfile.File && !*force {
		return failf(stderr, fmt.Errorf("%s exists: pass --force to overwrite it, or -o to write another file", *out))
	}
	// The config names its battery relative to itself; one that is not a
	// file (stdout, a FIFO, /dev/null) has no folder to put it beside, and
	// the current folder is where a redirect most likely lands.
	batteryName := "starter-battery.toml"
	batteryPath := batteryName
	if kind != outfile.Stream {
		batteryPath = filepath.Join(filepath.Dir(*out), batteryName)
	}
	// With the config on stdout, what init found must not mix with it.
	report := stdout
	if *out == outfile.Stdout {
		report = stderr
	}

	var targets []probeTarget
	if *scan {
		for _, p := range usualPorts {
			targets = append(targets, probeTarget{url: fmt.Sprintf("http://127.0.0.1:%d/v1", p.port), label: p.label})
		}
	}
	for _, u := range urls {
		norm, err := normaliseURL(u)
		if err != nil {
			return failf(stderr, err)
		}
		if !slices.ContainsFunc(targets, func(t probeTarget) bool { return t.url == norm }) {
			targets = append(targets, probeTarget{url: norm, label: "--url"})
		}
	}
	if len(targets) == 0 {
		return failf(stderr, errors.New("init: nothing to probe: give --url, or leave --scan on"))
	}
	s := starter{When: time.Now(), Battery: batteryName}
	s.Servers, s.Missed = probeTargets(targets, *timeout)
	s.Judge = suggestJudge(s.Servers)

	for _, sv := range s.Servers {
		slots := "slots unknown: " + fmt.Sprint(defaultSlots)
		if sv.Slots > 0 {
			slots = plural(sv.Slots, "slot")
		}
		fmt.Fprintf(report, "found    %s at %s (kind %s, %s, %s)\n", sv.Name, serverWhere(sv.Kind, sv.URL), sv.Kind, plural(len(sv.Models), "chat model"), slots)
	}
	for _, m := range s.Missed {
		fmt.Fprintf(report, "missed   %s\n", m)
	}
	if err := outfile.Write(*out, stdout, []byte(s.render())); err != nil {
		return failf(stderr, err)
	}
	wroteBattery := true
	if _, err := os.Stat(batteryPath); err == nil && !*force {
		wroteBattery = false
	} else if err := outfile.Write(batteryPath, stdout, []byte(starterBattery)); err != nil {
		return failf(stderr, err)
	}
	name := *out
	if name == outfile.Stdout {
		name = "stdout"
	}

	switch {
	case len(s.Servers) == 0:
		fmt.Fprintf(report, "no server found: wrote %s to run on pitwall's simulator until you start one (see its top)\n", name)
	case s.Judge != nil:
		fmt.Fprintf(report, "wrote    %s: %s, %s, judge %s on %s\n", name, plural(len(s.Servers), "server"),
			plural(len(s.starterModels()), "model"), s.Judge.Model, s.Judge.Server)
	default:
		fmt.Fprintf(report, "wrote    %s: %s, %s, no judge (checks decide)\n", name, plural(len(s.Servers), "server"), plural(len(s.starterModels()), "model"))
	}
	if wroteBattery {
		fmt.Fprintf(report, "wrote    %s\n", batteryPath)
	} else {
		fmt.Fprintf(report, "kept     %s (it exists; --force replaces it)\n", batteryPath)
	}
	if kind == outfile.Stream {
		fmt.Fprintf(report, "next     save the config as a file beside %s, then pitwall validate FILE && pitwall run FILE\n", batteryPath)
	} else {
		fmt.Fprintf(report, "next     pitwall validate %s && pitwall run %s\n", *out, *out)
	}
	return 0
}

// probeTarget is one address init asks.
type probeTarget struct {
	url   string
	label string // what usually listens there, or "--url"
}

// normaliseURL makes a --url a server's base URL: a scheme (http) and a
// path (/v1) when it has none.
func normaliseURL(raw string) (string, error) {
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("--url %q is not a URL: write e.g. http://127.0.0.1:1234/v1", redact.URL(raw))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1"
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// probeTargets asks every target at once and returns the servers that
// listed their models, in the targets' order, and a line for each that did
// not.
func probeTargets(targets []probeTarget, timeout time.Duration) ([]starterServer, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	hc := &http.Client{Timeout: timeout}
	results := make([]probe.Result, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			results[i] = probe.Probe(ctx, hc, probe.Server{Name: t.label, URL: t.url})
		})
	}
	wg.Wait()

	var found []starterServer
	var missed []string
	names := map[string]int{}
	for i, r := range results {
		t := targets[i]
		where := redact.URL(t.url)
		if t.label != "--url" {
			where += " (" + t.label + ")"
		}
		switch {
		case !r.Reachable:
			missed = append(missed, "nothing answered on "+where)
			continue
		case r.Error != "":
			missed = append(missed, fmt.Sprintf("%s answered, but not with a model list: %s", where, r.Error))
			continue
		}
		sv := starterServer{URL: t.url, Kind: r.Kind, Slots: r.Slots}
		sv.Label = kindLabels[sv.Kind]
		if sv.Kind == chat.KindSim {
			// A simulator run by `pitwall sim` or a test: a kind = "sim"
			// server would be started by pitwall itself, so name the
			// backend it imitates.
			sv.Kind = simBackend(ctx, hc, t.url)
			sv.Label = "a pitwall simulator imitating " + kindLabels[sv.Kind]
		}
		for _, m := range slices.Sorted(slices.Values(r.Models)) {
			if chatModel(m) {
				sv.Models = append(sv.Models, m)
			} else {
				sv.Skipped = append(sv.Skipped, m)
			}
		}
		if len(sv.Models) == 0 {
			missed = append(missed, fmt.Sprintf("%s answered, but offers no chat model (load one, then run init again)", where))
			continue
		}
		base := string(sv.Kind)
		names[base]++
		sv.Name = base
		if names[base] > 1 {
			sv.Name = fmt.Sprintf("%s-%d", base, names[base])
		}
		found = append(found, sv)
	}
	return found, missed
}

// simBackend is the backend a pitwall simulator imitates, from its
// /sim/state; openai when it does not say or imitates none.
func simBackend(ctx context.Context, hc *http.Client, baseURL string) chat.Kind {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe.BackendURL(baseURL, "/sim/state"), nil)
	if err != nil {
		return chat.KindOpenAI
	}
	resp, err := hc.Do(req)
	if err != nil {
		return chat.KindOpenAI
	}
	defer resp.Body.Close()
	var st struct {
		Backend string `json:"backend"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st) != nil {
		return chat.KindOpenAI
	}
	k := chat.Kind(st.Backend)
	if k == chat.KindSim || !slices.Contains(chat.Kinds(), k) {
		return chat.KindOpenAI
	}
	return k
}
