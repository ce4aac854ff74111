package setup

import (
	"errors"
	"io"
	"strings"
	"testing"

	"pitwall/config"
	"pitwall/gpu/chat"
)

type closer struct{ closed bool }

func (c *closer) Close() error { c.closed = true; return nil }

// withSimulator registers s for one test and puts back what was there.
func withSimulator(t *testing.T, s Simulator) {
	simMu.Lock()
	before := simulator
	simMu.Unlock()
	RegisterSimulator(s)
	t.Cleanup(func() { RegisterSimulator(before) })
}

func TestStartSimsCallsTheRegisteredSimulatorOnlyForSimServers(t *testing.T) {
	fleet := &closer{}
	calls := 0
	withSimulator(t, func(cfg *config.Config, instant bool) (io.Closer, error) {
		calls++
		if !instant {
			t.Errorf("instant = false, want the caller's true")
		}
		return fleet, nil
	})

	real := &config.Config{Path: "real.toml", Servers: []config.Server{{Name: "gpu0", Kind: chat.KindOllama}}}
	if c, err := StartSims(real, true); c != nil || err != nil {
		t.Fatalf("no sim server: StartSims = %v, %v; want nil, nil", c, err)
	}
	if calls != 0 {
		t.Fatalf("the simulator was called %d times for a config without sim servers", calls)
	}

	simmed := &config.Config{Path: "demo.toml", Servers: []config.Server{{Name: "gpu0", Kind: chat.KindOllama}, {Name: "gpu1", Kind: chat.KindSim}}}
	c, err := StartSims(simmed, true)
	if err != nil || c != fleet || calls != 1 {
		t.Fatalf("StartSims = %v, %v after %d calls; want the simulator's fleet after 1", c, err, calls)
	}
}

func TestStartSimsWithoutASimulatorNamesTheServer(t *testing.T) {
	withSimulator(t, nil)
	cfg := &config.Config{Path: "demo.toml", Servers: []config.Server{{Name: "gpu1", Kind: chat.KindSim}}}
	_, err := StartSims(cfg, false)
	if err == nil || !strings.Contains(err.Error(), "demo.toml") || !strings.Contains(err.Error(), `"gpu1"`) {
		t.Fatalf("err = %v; want one naming demo.toml and gpu1", err)
	}
}

func TestStartSimsPassesTheSimulatorsErrorOn(t *testing.T) {
	boom := errors.New("port taken")
	withSimulator(t, func(*config.Config, bool) (io.Closer, error) { return nil, boom })
	cfg := &config.Config{Path: "demo.toml", Servers: []config.Server{{Name: "gpu1", Kind: chat.KindSim}}}
	if c, err := StartSims(cfg, false); c != nil || !errors.Is(err, boom) {
		t.Fatalf("StartSims = %v, %v; want nil, %v", c, err, boom)
	}
}
