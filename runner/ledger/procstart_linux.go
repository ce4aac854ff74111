package ledger

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// bootID names this boot of the machine: a pid's start time counts from
// the boot, so the two together name one process for good.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// procStart reads when process pid started, as "<boot id>/<clock ticks
// since boot>" (field 22 of /proc/PID/stat), and whether it is a zombie.
// ok is false when it cannot be read (the process is gone, or /proc is not
// there).
func procStart(pid int) (start string, zombie, ok bool) {
	boot := bootID()
	if boot == "" || pid <= 0 {
		return "", false, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false, false
	}
	// The command name (field 2) is in parentheses and may hold spaces and
	// parentheses itself: the fields after it start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", false, false
	}
	f := strings.Fields(s[i+1:])
	const state, starttime = 0, 19 // fields 3 and 22, counted from field 3
	if len(f) <= starttime {
		return "", false, false
	}
	if _, err := strconv.ParseUint(f[starttime], 10, 64); err != nil {
		return "", false, false
	}
	return boot + "/" + f[starttime], f[state] == "Z" || f[state] == "X", true
}
