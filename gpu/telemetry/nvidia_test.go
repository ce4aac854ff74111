package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The recorded fixtures come from other queries than pitwall's; these are
// their columns, as the README in testdata names them.
var (
	gpuUtilsIssue83Fields   = strings.Split("power.limit,power.min_limit,power.max_limit,memory.total,vbios_version,driver_version,name,gpu_uuid,power.draw,temperature.gpu,temperature.memory,clocks.current.graphics,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,fan.speed,pcie.link.width.current,pstate", ",")
	llamaSwapIssue782Fields = strings.Split("memory.used,memory.total,utilization.memory", ",")
)

func TestNvidiaFixturesParseToTheirValues(t *testing.T) {
	tests := []struct {
		file   string
		fields []string
		want   []GPUState
	}{
		{
			file:   "rtx2080-driver440-gpu-utils-issue83.csv",
			fields: gpuUtilsIssue83Fields,
			want: []GPUState{{
				UUID: "GPU-22b2c6ac-2d49-4863-197c-9c469071178a", Name: "GeForce RTX 2080",
				UtilPct: 86, MemTotalMiB: 7979, TempC: 45, PowerW: 176.98,
			}},
		},
		{
			// Unified memory: nvidia-smi cannot say how much is used.
			file:   "gb10-dgx-spark-llama-swap-issue782.csv",
			fields: llamaSwapIssue782Fields,
			want:   []GPUState{{}},
		},
		{
			file:   "synthetic-h100x2.csv",
			fields: nvidiaFields,
			want: []GPUState{
				{Index: 0, UUID: "GPU-5f1e0000-0000-4000-8000-000000000000", Name: "NVIDIA H100 80GB HBM3",
					UtilPct: 0, MemUsedMiB: 72790, MemTotalMiB: 81559, TempC: 39, PowerW: 145.32},
				{Index: 1, UUID: "GPU-5f1e0000-0000-4000-8000-000000000001", Name: "NVIDIA H100 80GB HBM3",
					UtilPct: 4, MemUsedMiB: 72790, MemTotalMiB: 81559, TempC: 32, PowerW: 140.07},
			},
		},
		{
			file:   "synthetic-units-and-unsupported.csv",
			fields: nvidiaFields,
			want: []GPUState{
				{Index: 0, UUID: "GPU-5f1e0000-0000-4000-8000-000000000010", Name: "NVIDIA GeForce RTX 4090",
					UtilPct: 79, MemUsedMiB: 8024, MemTotalMiB: 24564, TempC: 61},
				{Index: 1, UUID: "GPU-5f1e0000-0000-4000-8000-000000000011", Name: "NVIDIA GB10",
					UtilPct: 96, TempC: 55, PowerW: 38.21},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "nvidia-smi", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d lines, want %d", len(lines), len(tt.want))
			}
			for i, line := range lines {
				got, err := parseNvidiaLine(line, tt.fields)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if got != tt.want[i] {
					t.Errorf("line %d:\n got %+v\nwant %+v", i+1, got, tt.want[i])
				}
			}
		})
	}
}

func TestParseNvidiaSMI(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    GPUState
		wantErr string // a part of the error; "" means no error
	}{
		{
			name: "plain nounits line",
			line: "3, GPU-abc, NVIDIA A100-SXM4-80GB, 71, 42000, 81920, 67, 298.50",
			want: GPUState{Index: 3, UUID: "GPU-abc", Name: "NVIDIA A100-SXM4-80GB", UtilPct: 71,
				MemUsedMiB: 42000, MemTotalMiB: 81920, TempC: 67, PowerW: 298.5},
		},
		{
			name: "units tolerated",
			line: "0, GPU-abc, NVIDIA GeForce RTX 3090, 35 %, 1024 MiB, 24576 MiB, 50 C, 120.25 W",
			want: GPUState{UUID: "GPU-abc", Name: "NVIDIA GeForce RTX 3090", UtilPct: 35,
				MemUsedMiB: 1024, MemTotalMiB: 24576, TempC: 50, PowerW: 120.25},
		},
		{
			name: "units without a space",
			line: "0, GPU-abc, X, 35%, 1024MiB, 2048MiB, 50, 7W",
			want: GPUState{UUID: "GPU-abc", Name: "X", UtilPct: 35, MemUsedMiB: 1024, MemTotalMiB: 2048, TempC: 50, PowerW: 7},
		},
		{
			name: "every kind of not-available reads as unknown",
			line: "1, [N/A], [Not Supported], N/A, [Unknown Error], [Insufficient Permissions], Not Supported, [GPU is lost]",
			want: GPUState{Index: 1},
		},
		{
			name: "extra spaces and CRLF trimmed",
			line: "  2 ,   GPU-x  ,  Tesla T4 ,  0 ,  3 ,  15360 ,  34 ,  9.87 \r",
			want: GPUState{Index: 2, UUID: "GPU-x", Name: "Tesla T4", MemUsedMiB: 3, MemTotalMiB: 15360, TempC: 34, PowerW: 9.87},
		},
		{name: "too few columns", line: "0, GPU-x, T4, 0, 3, 15360, 34", wantErr: "7 columns, want 8"},
		{name: "too many columns", line: "0, GPU-x, T4, 0, 3, 15360, 34, 9, 1", wantErr: "more than the 8 columns"},
		{name: "a number that is not", line: "0, GPU-x, T4, lots, 3, 15360, 34, 9", wantErr: `utilization.gpu: "lots" is not a number`},
		{name: "an index that is not", line: "zero, GPU-x, T4, 1, 3, 15360, 34, 9", wantErr: "index"},
		{name: "empty line", line: "", wantErr: "empty line"},
		{
			name:    "a failure message instead of readings",
			line:    "Unable to determine the device handle for GPU0000:01:00.0: GPU has fallen off the bus.",
			wantErr: "fallen off the bus",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNvidiaSMI(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestNvidiaArgsAskForTheParsedColumns(t *testing.T) {
	args := nvidiaArgs(250)
	want := []string{
		"--query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw",
		"--format=csv,noheader,nounits", "-lms", "250",
	}
	if strings.Join(args, " ") != strings.Join(want, " ") {
		t.Errorf("args = %q, want %q", args, want)
	}
}

func BenchmarkParseNvidiaSMI(b *testing.B) {
	line := "0, GPU-5f1e0000-0000-4000-8000-000000000000, NVIDIA H100 80GB HBM3, 87, 72790, 81559, 71, 612.45"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseNvidiaSMI(line); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
