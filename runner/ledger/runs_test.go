package ledger

import (
	"errors"
	"os/user"
	"reflect"
	"strings"
	"testing"
)

func TestRunRoundTrips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  RunRow
	}{
		{"every field", RunRow{
			ID: "20261121-154203-3fa9", Name: "tool-competence", Status: "completed",
			ScoringMode: "jury", ConfigJSON: `{"name":"tool-competence","servers":[{"api_key_env":"OPENAI_API_KEY"}]}`,
			ScoringJSON: `{"mode":"jury","judges":[{"name":"gemma","api_key_env":""}]}`,
			Models:      []string{"qwen3-8b", "granite-4.0-micro", "gemma-3-12b"},
			Tests:       []string{"t1", "t2 ünïcode"}, Repeat: 3,
			StartedAt: ms("2026-11-21T15:42:03.123Z"), EndedAt: ms("2026-11-21T15:50:00.001Z"),
			Owner:     Owner{PID: 4242, Host: "gpu-box-2", Start: "boot:123", User: "alice"},
			Heartbeat: ms("2026-11-21T15:49:58.500Z"),
		}},
		{"still running, nothing optional", RunRow{
			ID: "r-min", Status: "running", StartedAt: ms("2026-11-21T15:42:03Z"),
		}},
		{"empty lists stay empty", RunRow{
			ID: "r-empty", Status: "running", Models: []string{}, Tests: []string{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openTest(t)
			if err := l.CreateRun(tt.run); err != nil {
				t.Fatal(err)
			}
			got, err := l.Run(tt.run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.run) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tt.run)
			}
		})
	}
}

func TestCreateRunDefaultsStatusAndRefusesDuplicates(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	if err := l.CreateRun(RunRow{ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Run("r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "running" {
		t.Errorf("status = %q, want running", got.Status)
	}
	if err := l.CreateRun(RunRow{ID: "r1"}); err == nil {
		t.Error("a second run with the same id was accepted")
	}
	if err := l.CreateRun(RunRow{}); err == nil {
		t.Error("a run without id was accepted")
	}
}

func TestFinishRunSetsStatusAndEnd(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	start := ms("2026-01-02T03:04:05.006Z")
	if err := l.CreateRun(RunRow{ID: "r1", StartedAt: start}); err != nil {
		t.Fatal(err)
	}
	end := ms("2026-01-02T04:00:00.5Z")
	if err := l.FinishRun("r1", "stopped", "stopped by the user", end); err != nil {
		t.Fatal(err)
	}
	got, err := l.Run("r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "stopped" || got.EndedAt != end || got.StartedAt != start || got.Message != "stopped by the user" {
		t.Errorf("after FinishRun: status %q, message %q, started %v, ended %v", got.Status, got.Message, got.StartedAt, got.EndedAt)
	}
	if err := l.FinishRun("nope", "completed", "", end); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun of an unknown run: %v, want ErrNotFound", err)
	}
}

func TestRunsListsNewestFirstWithinLimit(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	for _, r := range []RunRow{
		{ID: "b", StartedAt: ms("2026-01-02T00:00:00Z")},
		{ID: "c", StartedAt: ms("2026-01-03T00:00:00Z")},
		{ID: "a", StartedAt: ms("2026-01-01T00:00:00Z")},
	} {
		if err := l.CreateRun(r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		limit int
		want  []string
	}{
		{0, []string{"c", "b", "a"}},
		{-1, []string{"c", "b", "a"}},
		{2, []string{"c", "b"}},
		{10, []string{"c", "b", "a"}},
	}
	for _, tt := range tests {
		runs, err := l.Runs(tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range runs {
			got = append(got, r.ID)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Runs(%d) = %v, want %v", tt.limit, got, tt.want)
		}
	}
}

func TestRunResolvesLastExactAndUniquePrefixes(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	if _, err := l.Run("last"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Run(last) on an empty ledger: %v, want ErrNotFound", err)
	}
	for _, r := range []RunRow{
		{ID: "20261121-154203-3fa9", StartedAt: ms("2026-11-21T15:42:03Z")},
		{ID: "20261121-154203-3fb1", StartedAt: ms("2026-11-21T15:42:03Z")},
		{ID: "20261122-090000-0001", StartedAt: ms("2026-11-22T09:00:00Z")},
		{ID: "2026", StartedAt: ms("2026-01-01T00:00:00Z")}, // exact beats prefix
		{ID: "x%_y", StartedAt: ms("2025-01-01T00:00:00Z")},
		{ID: "ünï-cödé", StartedAt: ms("2024-01-01T00:00:00Z")},
	} {
		if err := l.CreateRun(r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		id        string
		want      string // "" when an error is expected
		ambiguous bool
	}{
		{"last", "20261122-090000-0001", false},
		{"20261121-154203-3fa9", "20261121-154203-3fa9", false},
		{"20261121-154203-3fa", "20261121-154203-3fa9", false},
		{"20261122", "20261122-090000-0001", false},
		{"2026", "2026", false},
		{"x%", "x%_y", false},
		{"x_", "", false}, // LIKE wildcards are not wildcards here
		{"ünï", "ünï-cödé", false},
		{"20261121-154203-3f", "", true},
		{"20261121", "", true},
		{"1999", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, err := l.Run(tt.id)
			if tt.want != "" {
				if err != nil || got.ID != tt.want {
					t.Fatalf("Run(%q) = %q, %v; want %q", tt.id, got.ID, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Run(%q) = %q, %v; want ErrNotFound", tt.id, got.ID, err)
			}
			if errors.Is(err, ErrAmbiguous) != tt.ambiguous {
				t.Errorf("Run(%q): %v; ambiguous should be %v", tt.id, err, tt.ambiguous)
			}
			if tt.id != "" && !strings.Contains(err.Error(), "\""+tt.id+"\"") {
				t.Errorf("error %q does not say which id", err)
			}
			if tt.ambiguous && !strings.Contains(err.Error(), "20261121-154203-3fa9") {
				t.Errorf("error %q does not list the runs it matches", err)
			}
		})
	}
}

func TestCreateRunRefusesConfigHoldingAnAPIKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		config  string
		scoring string
		refuse  string // "" to accept; otherwise where the error points
	}{
		{"key env names are fine", `{"servers":[{"api_key_env":"OPENAI_API_KEY"}]}`, "", ""},
		{"empty key is fine", `{"api_key":""}`, "", ""},
		{"no config", "", "", ""},
		{"api_key at top", `{"api_key":"sk-live-123"}`, "", "$.api_key"},
		{"APIKey in a server", `{"servers":[{"name":"a"},{"APIKey":"sk-1"}]}`, "", "$.servers[1].APIKey"},
		{"api-key in a judge", "", `{"judges":[{"api-key":"k"}]}`, "$.judges[0].api-key"},
		{"authorization header", `{"headers":{"Authorization":"Bearer x"}}`, "", "$.headers.Authorization"},
		{"not JSON", `name = "toml"`, "", "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openTest(t)
			err := l.CreateRun(RunRow{ID: "r", ConfigJSON: tt.config, ScoringJSON: tt.scoring})
			if tt.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("stored a config holding a key")
			}
			if !strings.Contains(err.Error(), tt.refuse) {
				t.Errorf("error %q does not point at %s", err, tt.refuse)
			}
			for _, secret := range []string{"sk-live-123", "sk-1", "Bearer x"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q repeats the secret", err)
				}
			}
			if _, err := l.Run("r"); !errors.Is(err, ErrNotFound) {
				t.Errorf("the run was stored anyway: %v", err)
			}
		})
	}
}

func TestARunNamesTheUserItsProcessRunsAs(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	me := l.Self()
	u, err := user.Current()
	if err != nil {
		t.Skipf("this system cannot name the current user (%v): nothing to compare with", err)
	}
	if me.User != u.Username {
		t.Fatalf("Self().User = %q, want %q", me.User, u.Username)
	}
	if err := l.CreateRun(RunRow{ID: "r", Status: RunRunning, Owner: me, Heartbeat: ms("2026-11-21T15:42:03Z")}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Run("r")
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != me {
		t.Errorf("owner read back %+v, want %+v", got.Owner, me)
	}
}
