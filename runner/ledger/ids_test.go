package ledger

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewRunIDIsShortSortableAndUnique(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{4}$`)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	tests := []struct {
		name   string
		at     time.Time
		prefix string
	}{
		{"UTC", time.Date(2026, 11, 21, 15, 42, 3, 999e6, time.UTC), "20261121-154203-"},
		{"other zones are written in UTC", time.Date(2026, 11, 21, 16, 42, 3, 0, paris), "20261121-154203-"},
		{"single digits are padded", time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC), "20270102-030405-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := NewRunID(tt.at)
			if !shape.MatchString(id) || !strings.HasPrefix(id, tt.prefix) {
				t.Errorf("NewRunID(%v) = %q, want %s and the shape %s", tt.at, id, tt.prefix, shape)
			}
		})
	}

	t.Run("later seconds sort after", func(t *testing.T) {
		base := time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC)
		var ids []string
		for i := range 4 {
			ids = append(ids, NewRunID(base.Add(time.Duration(i)*time.Second)))
		}
		if !slices.IsSorted(ids) {
			t.Errorf("ids of successive seconds do not sort: %v", ids)
		}
	})

	t.Run("a burst in one second never repeats", func(t *testing.T) {
		at := time.Date(2026, 11, 21, 15, 42, 3, 0, time.UTC)
		seen := map[string]bool{}
		for range 5000 {
			id := NewRunID(at)
			if seen[id] {
				t.Fatalf("NewRunID repeated %s", id)
			}
			seen[id] = true
		}
	})
}
