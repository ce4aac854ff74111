package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const rocmMiB = 1 << 20

func TestRocmFixturesParseToTheirValues(t *testing.T) {
	mi100 := func(i int, uuid string, temp, power float64) GPUState {
		return GPUState{Index: i, UUID: uuid, Name: "Arcturus GL-XL [Instinct MI100]",
			MemUsedMiB: 6750208.0 / rocmMiB, MemTotalMiB: 34342961152.0 / rocmMiB, TempC: temp, PowerW: power}
	}
	tests := []struct {
		file string
		want []GPUState
	}{
		{
			file: "mi100x4-rocm602-telegraf.json",
			want: []GPUState{
				mi100(0, "0x79ccd55167a2124a", 53, 36),
				mi100(1, "0x4edfb117a17a07d", 55, 44),
				mi100(2, "0xd4a9ec48d03d261d", 54, 43),
				mi100(3, "0x1b9dd972253c3736", 51, 39),
			},
		},
		{
			// "Unique ID": "N/A" leaves the UUID unknown.
			file: "rx6700xt-rocm612-telegraf.json",
			want: []GPUState{{Name: "Navi 22 [Radeon RX 6700/6700 XT / 6800M]",
				MemUsedMiB: 1572745216.0 / rocmMiB, MemTotalMiB: 12868124672.0 / rocmMiB, TempC: 45, PowerW: 6}},
		},
		{
			// Recorded without --showpower and --showtemp: those stay unknown.
			file: "rx7900xt-marimo-issue9237.json",
			want: []GPUState{{Name: "Radeon RX 7900 XT", MemUsedMiB: 27856896.0 / rocmMiB, MemTotalMiB: 21458059264.0 / rocmMiB}},
		},
		{
			// No edge sensor: the junction temperature stands in; socket power.
			file: "mi300x-lilbee.json",
			want: []GPUState{{MemUsedMiB: 299687936.0 / rocmMiB, MemTotalMiB: 205822885888.0 / rocmMiB, TempC: 45, PowerW: 159}},
		},
		{
			file: "rx9060xt-lilbee.json",
			want: []GPUState{{UtilPct: 100, MemUsedMiB: 9518669824.0 / rocmMiB, MemTotalMiB: 17095983104.0 / rocmMiB, TempC: 39, PowerW: 17}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "rocm-smi", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseRocmSMI(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d GPUs, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("GPU %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParseRocmSMI(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    []GPUState
		wantErr string
	}{
		{
			name: "warnings before the JSON are skipped",
			data: "WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status\n\n" +
				`{"card0": {"GPU use (%)": "12", "Temperature (Sensor edge) (C)": "40.0"}}`,
			want: []GPUState{{UtilPct: 12, TempC: 40}},
		},
		{
			name: "cards sorted by index, other members skipped",
			data: `{"system": {"Driver version": "6.3.6"}, "card10": {"GPU use (%)": "3"}, "card2": {"GPU use (%)": "1"}, "cardX": {}}`,
			want: []GPUState{{Index: 2, UtilPct: 1}, {Index: 10, UtilPct: 3}},
		},
		{
			name: "N/A and numbers that are JSON numbers",
			data: `{"card0": {"GPU use (%)": 7, "Average Graphics Package Power (W)": "N/A", "Current Socket Graphics Package Power (W)": "55.5"}}`,
			want: []GPUState{{UtilPct: 7, PowerW: 55.5}},
		},
		{name: "no JSON at all", data: "ERROR: No AMD GPUs found", wantErr: "no JSON object"},
		{name: "cut-off JSON", data: `{"card0": {"GPU use (%)": "1"`, wantErr: "rocm-smi"},
		{name: "a card that is not an object", data: `{"card0": "busy"}`, wantErr: "card0"},
		{name: "a number that is not", data: `{"card0": {"GPU use (%)": "high"}}`, wantErr: `"GPU use (%)" is "high"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRocmSMI([]byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("GPU %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
