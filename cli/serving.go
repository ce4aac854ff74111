package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/chat"
)

// checkServing asks the config's real servers what they offer, as a run
// would, and checks that every model and judge model is offered under the
// name the run will send (config.CheckOffered: an unknown model fails,
// naming the nearest name offered). Simulated servers offer what the config
// lists. A server that does not answer is reported and its models are not
// checked: validate says what it could not know rather than guessing.
func checkServing(cfg *config.Config, servers []gpu.ServerConfig, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var real []gpu.ServerConfig
	offered := map[string][]string{}
	for _, s := range servers {
		if s.Kind == chat.KindSim {
			offered[s.Name] = s.Models
			continue
		}
		real = append(real, s)
	}
	hc := &http.Client{Timeout: 4 * time.Second}
	silent := 0
	for i, r := range probeAllWith(ctx, hc, real) {
		if !r.Reachable {
			fmt.Fprintf(stderr, "pitwall: %s: server %s did not answer (%s): the models it would serve are not checked\n", cfg.Path, real[i].Name, r.Error)
			silent++
			continue
		}
		offered[real[i].Name] = r.Models
	}
	if silent > 0 {
		return nil
	}
	return config.CheckOffered(cfg, offered)
}

// printWarnings prints what a battery asked for that pitwall loaded but
// does not do (once per kind, with a count).
func printWarnings(w io.Writer, cfg *config.Config) {
	for _, warn := range cfg.Warnings {
		fmt.Fprintf(w, "pitwall: warning: %s\n", warn)
	}
}
