package telemetry

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// nvidiaFields are the columns pitwall asks nvidia-smi for, in order. The
// command line and the parser are both built from this list, so they cannot
// drift apart.
var nvidiaFields = []string{
	"index", "uuid", "name", "utilization.gpu",
	"memory.used", "memory.total", "temperature.gpu", "power.draw",
}

// nvidiaArgs is the nvidia-smi command line for one reading every interval
// of ms milliseconds; nvidia-smi keeps running and prints one line per GPU
// per tick.
func nvidiaArgs(ms int64) []string {
	return []string{
		"--query-gpu=" + strings.Join(nvidiaFields, ","),
		"--format=csv,noheader,nounits",
		"-lms", strconv.FormatInt(ms, 10),
	}
}

// ParseNvidiaSMI parses one line of
// `nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw --format=csv,noheader,nounits`.
//
// NVIDIA does not promise the format, so the parser is lenient where that is
// safe and strict where it is not: spaces are trimmed, units are tolerated
// ("35 %", "1024 MiB", "70.5 W"), and a value nvidia-smi cannot give
// ("[N/A]", "N/A", "[Not Supported]", any other "[...]") reads as 0, unknown.
// A line with more or fewer columns, or a number that is not one, is an
// error that names the line. At is left zero for the caller to stamp.
func ParseNvidiaSMI(line string) (GPUState, error) {
	return parseNvidiaLine(line, nvidiaFields)
}

// parseNvidiaLine parses a line of a --query-gpu CSV whose columns are
// fields. Columns pitwall has no use for are checked for count only, which
// lets recordings of other queries serve as fixtures for the value parsing.
func parseNvidiaLine(line string, fields []string) (GPUState, error) {
	var st GPUState
	rest := strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(rest) == "" {
		return st, fmt.Errorf("nvidia-smi: empty line")
	}
	n := 0
	for more := true; more; n++ {
		var raw string
		raw, rest, more = strings.Cut(rest, ",")
		if n >= len(fields) {
			return GPUState{}, fmt.Errorf("nvidia-smi line %q: more than the %d columns asked for", line, len(fields))
		}
		if err := setNvidiaField(&st, fields[n], strings.TrimSpace(raw)); err != nil {
			return GPUState{}, fmt.Errorf("nvidia-smi line %q: %w", line, err)
		}
	}
	if n != len(fields) {
		return GPUState{}, fmt.Errorf("nvidia-smi line %q: %d columns, want %d", line, n, len(fields))
	}
	return st, nil
}

func setNvidiaField(st *GPUState, field, v string) error {
	var dst *float64
	switch field {
	case "index":
		if smiUnavailable(v) {
			return nil
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("index %q is not an integer", v)
		}
		st.Index = i
		return nil
	case "uuid", "gpu_uuid":
		if !smiUnavailable(v) {
			st.UUID = v
		}
		return nil
	case "name", "gpu_name":
		if !smiUnavailable(v) {
			st.Name = v
		}
		return nil
	case "utilization.gpu":
		dst = &st.UtilPct
	case "memory.used":
		dst = &st.MemUsedMiB
	case "memory.total":
		dst = &st.MemTotalMiB
	case "temperature.gpu":
		dst = &st.TempC
	case "power.draw", "power.draw.average", "power.draw.instant":
		dst = &st.PowerW
	default:
		return nil
	}
	f, err := parseNvidiaNumber(v)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	*dst = f
	return nil
}

// smiUnavailable reports whether v is one of nvidia-smi's ways of saying it has
// no value: "[N/A]", "[Not Supported]", "[Unknown Error]", "[GPU is lost]"
// and the like are bracketed; older drivers print a bare "N/A".
func smiUnavailable(v string) bool {
	if v == "" || strings.EqualFold(v, "N/A") || strings.EqualFold(v, "Not Supported") {
		return true
	}
	return strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]")
}

// parseNvidiaNumber reads a number with an optional unit after it, the way
// nvidia-smi prints without nounits: "35 %", "1024 MiB", "70.50 W".
func parseNvidiaNumber(v string) (float64, error) {
	if smiUnavailable(v) {
		return 0, nil
	}
	num := v
	if i := strings.IndexByte(num, ' '); i >= 0 {
		num = num[:i]
	}
	num = strings.TrimRightFunc(num, func(r rune) bool { return r == '%' || unicode.IsLetter(r) })
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	return f, nil
}
