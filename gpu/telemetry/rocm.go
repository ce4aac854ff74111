package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// rocmArgs is the rocm-smi command line pitwall polls: one JSON object with
// a "cardN" member per GPU.
var rocmArgs = []string{"--showuse", "--showmemuse", "--showmeminfo", "vram", "--showpower", "--showtemp", "--json"}

// rocm-smi's key names; they changed across ROCm releases, so each reading
// lists the spellings seen, best first.
var (
	rocmUtil     = []string{"GPU use (%)"}
	rocmMemTotal = []string{"VRAM Total Memory (B)"}
	rocmMemUsed  = []string{"VRAM Total Used Memory (B)"}
	rocmPower    = []string{"Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)"}
	// MI300-class parts have no edge sensor, only junction and memory: a
	// junction reading beats showing no temperature at all.
	rocmTemp = []string{"Temperature (Sensor edge) (C)", "Temperature (Sensor junction) (C)", "Temperature (Sensor memory) (C)"}
	rocmName = []string{"Device Name", "Card Series", "Card series"}
	rocmUUID = []string{"Unique ID"}
)

// ParseRocmSMI parses the JSON of
// `rocm-smi --showuse --showmemuse --showmeminfo vram --showpower --showtemp --json`.
//
// Each "cardN" member becomes the GPU with index N; other members ("system")
// are skipped. VRAM is reported in bytes and converted to MiB. Values
// rocm-smi cannot give ("N/A", missing keys) read as 0, unknown. rocm-smi
// sometimes prints warnings before the JSON; they are skipped. The result is
// sorted by index; At is left zero for the caller to stamp.
func ParseRocmSMI(data []byte) ([]GPUState, error) {
	start := bytes.IndexByte(data, '{')
	if start < 0 {
		return nil, errors.New("rocm-smi: no JSON object in output")
	}
	// Members other than cards may have any shape, so cards are decoded
	// one by one.
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data[start:], &members); err != nil {
		return nil, fmt.Errorf("rocm-smi: %w", err)
	}
	var out []GPUState
	for key, raw := range members {
		num, ok := strings.CutPrefix(key, "card")
		if !ok {
			continue
		}
		idx, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		var card map[string]json.RawMessage
		if err := json.Unmarshal(raw, &card); err != nil {
			return nil, fmt.Errorf("rocm-smi %s: %w", key, err)
		}
		st := GPUState{Index: idx}
		st.Name = rocmString(card, rocmName)
		st.UUID = rocmString(card, rocmUUID)
		st.UtilPct, err = rocmNumber(card, rocmUtil)
		if err == nil {
			st.TempC, err = rocmNumber(card, rocmTemp)
		}
		if err == nil {
			st.PowerW, err = rocmNumber(card, rocmPower)
		}
		var total, used float64
		if err == nil {
			total, err = rocmNumber(card, rocmMemTotal)
		}
		if err == nil {
			used, err = rocmNumber(card, rocmMemUsed)
		}
		if err != nil {
			return nil, fmt.Errorf("rocm-smi %s: %w", key, err)
		}
		st.MemTotalMiB = total / (1 << 20)
		st.MemUsedMiB = used / (1 << 20)
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b GPUState) int { return a.Index - b.Index })
	return out, nil
}

// rocmValue returns the first of keys that card has with a usable value, as
// text. rocm-smi writes values as strings; a plain JSON number is accepted
// too.
func rocmValue(card map[string]json.RawMessage, keys []string) (key, val string) {
	for _, k := range keys {
		raw, ok := card[k]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			s = string(bytes.TrimSpace(raw))
		}
		s = strings.TrimSpace(s)
		if s == "" || s == "null" || smiUnavailable(s) {
			continue
		}
		return k, s
	}
	return "", ""
}

func rocmString(card map[string]json.RawMessage, keys []string) string {
	_, v := rocmValue(card, keys)
	return v
}

func rocmNumber(card map[string]json.RawMessage, keys []string) (float64, error) {
	k, v := rocmValue(card, keys)
	if k == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is %q, not a number", k, v)
	}
	return f, nil
}
