package config

import "testing"

func TestMaxReplyBytes(t *testing.T) {
	t.Parallel()
	t.Run("defaults to 8 MiB", func(t *testing.T) {
		c := mustLoad(t, writeConfig(t, simConfig("tools.toml")), Overrides{}, noEnv)
		if c.Run.MaxReplyBytes != 8<<20 {
			t.Errorf("MaxReplyBytes = %d, want %d", c.Run.MaxReplyBytes, 8<<20)
		}
	})
	t.Run("is read from [run]", func(t *testing.T) {
		c := mustLoad(t, writeConfig(t, simConfig("tools.toml")+"[run]\nmax_reply_bytes = 1048576\n"), Overrides{}, noEnv)
		if c.Run.MaxReplyBytes != 1<<20 {
			t.Errorf("MaxReplyBytes = %d, want %d", c.Run.MaxReplyBytes, 1<<20)
		}
	})
	t.Run("zero is refused where it is written", func(t *testing.T) {
		p := writeConfig(t, simConfig("tools.toml")+"[run]\nmax_reply_bytes = 0\n")
		_, err := Load(p, Overrides{}, noEnv)
		wantErr(t, err, p, lineOf(t, p, "max_reply_bytes", 1), "run.max_reply_bytes", "at least 1024, got 0", "8 MiB")
	})
}
