package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/internal/redact"
	"pitwall/runner/setup"
)

func cmdSim(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sim", "pitwall sim [CONFIG] [flags]",
		"Serves the config's kind = \"sim\" servers on loopback until interrupted, so curl or any\n"+
			"OpenAI client can talk to them. Give a server a url to fix its port.", stderr)
	cfg, sims, code, ok := loadFleetConfig(fs, args, stderr)
	if !ok {
		return code
	}
	if sims == nil {
		return failf(stderr, fmt.Errorf("%s has no kind = \"sim\" server to serve", cfg.Path))
	}
	defer sims.Close()
	for _, s := range cfg.Servers {
		if s.Kind == chat.KindSim {
			fmt.Fprintf(stdout, "%-10s %s  models: %s\n", s.Name, redact.URL(s.URL), strings.Join(s.Models, ", "))
		}
	}
	fmt.Fprintln(stdout, "serving; interrupt (ctrl+c) to stop")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	return 0
}

// loadFleetConfig is the opening of the commands that serve or probe a
// config's fleet (sim, servers): it registers --time-scale on fs (beside
// the command's own flags), parses args, loads the config and starts its
// kind = "sim" servers on loopback. When ok is false the command returns
// code; otherwise it closes sims, which is nil when the config has none.
func loadFleetConfig(fs *flag.FlagSet, args []string, stderr io.Writer) (cfg *config.Config, sims io.Closer, code int, ok bool) {
	var cf commonFlags
	cf.register(fs, "time-scale")
	cfg, code, ok = parseConfig(fs, &cf, args, stderr)
	if !ok {
		return nil, nil, code, false
	}
	sims, err := setup.StartSims(cfg, false)
	if err != nil {
		return nil, nil, failf(stderr, err), false
	}
	return cfg, sims, 0, true
}
