package ledger

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"
)

// issued remembers the suffixes handed out for the latest second asked for,
// so that ids a process draws in a burst never repeat; across processes the
// 16 random bits make a clash unlikely, and CreateRun refuses one if it
// happens.
var issued struct {
	sync.Mutex
	second string
	used   map[uint16]bool
}

// NewRunID returns a short id that sorts by time: the UTC second of t and
// four random hex digits, e.g. "20261121-154203-3fa9". UTC keeps the order
// right across time zones and daylight-saving changes.
func NewRunID(t time.Time) string {
	second := t.UTC().Format("20060102-150405")
	issued.Lock()
	defer issued.Unlock()
	if issued.second != second {
		issued.second = second
		issued.used = make(map[uint16]bool)
	}
	for {
		var b [2]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		n := binary.BigEndian.Uint16(b[:])
		// A second holds 65536 suffixes; past that, repeat rather than spin.
		if !issued.used[n] || len(issued.used) >= 1<<16 {
			issued.used[n] = true
			return fmt.Sprintf("%s-%04x", second, n)
		}
	}
}
