package probe

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParsePrometheus(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    map[string][]PromSample
		wantErr string
	}{
		{
			name: "comments and blank lines skipped, bare and labelled samples",
			text: "# HELP a A thing.\n# TYPE a gauge\n\na 1\nb{x=\"1\",y=\"two\"} 2.5\n",
			want: map[string][]PromSample{
				"a": {{Value: 1}},
				"b": {{Labels: map[string]string{"x": "1", "y": "two"}, Value: 2.5}},
			},
		},
		{
			name: "colons in names, timestamps dropped, series kept in order",
			text: "vllm:num_requests_running{engine=\"0\"} 3 1712000000000\nvllm:num_requests_running{engine=\"1\"} 2\n",
			want: map[string][]PromSample{"vllm:num_requests_running": {
				{Labels: map[string]string{"engine": "0"}, Value: 3},
				{Labels: map[string]string{"engine": "1"}, Value: 2},
			}},
		},
		{
			name: "escapes in label values, spaces and a trailing comma",
			text: `m{path="C:\\x", q="say \"hi\"", nl="a\nb", } 1.5e3`,
			want: map[string][]PromSample{"m": {{Labels: map[string]string{"path": `C:\x`, "q": `say "hi"`, "nl": "a\nb"}, Value: 1500}}},
		},
		{
			name: "empty braces",
			text: "m{} 4",
			want: map[string][]PromSample{"m": {{Labels: map[string]string{}, Value: 4}}},
		},
		{name: "no value", text: "a 1\nb\n", wantErr: "line 2"},
		{name: "value not a number", text: "a one", wantErr: `"one" is not a number`},
		{name: "unterminated label value", text: `a{x="1} 2`, wantErr: "unterminated"},
		{name: "unquoted label value", text: `a{x=1} 2`, wantErr: "not quoted"},
		{name: "missing separator", text: `a{x="1" y="2"} 2`, wantErr: "want , or }"},
		{name: "no name", text: `{x="1"} 2`, wantErr: "no metric name"},
		{name: "extra tokens", text: "a 1 2 3", wantErr: "optional timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePrometheus(strings.NewReader(tt.text))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParsePrometheusSpecialValues(t *testing.T) {
	got, err := ParsePrometheus(strings.NewReader("a +Inf\nb -Inf\nc NaN\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v := got["a"][0].Value; !math.IsInf(v, 1) {
		t.Errorf("a = %v, want +Inf", v)
	}
	if v := got["b"][0].Value; !math.IsInf(v, -1) {
		t.Errorf("b = %v, want -Inf", v)
	}
	if v := got["c"][0].Value; !math.IsNaN(v) {
		t.Errorf("c = %v, want NaN", v)
	}
}

func TestParsePrometheusBackendMetrics(t *testing.T) {
	tests := []struct {
		file   string
		metric string
		sum    float64
		series int
	}{
		{"vllm-metrics.txt", "vllm:num_requests_waiting", 6, 2},
		{"vllm-metrics.txt", "vllm:time_to_first_token_seconds_bucket", 451, 3},
		{"vllm-metrics-v0.txt", "vllm:gpu_cache_usage_perc", 0.0571, 1},
		{"llamacpp-metrics.txt", "llamacpp:requests_deferred", 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.metric, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "backends", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := ParsePrometheus(f)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(m[tt.metric]); n != tt.series {
				t.Errorf("%d series, want %d", n, tt.series)
			}
			if sum, _ := promSum(m, tt.metric); sum != tt.sum {
				t.Errorf("sum = %v, want %v", sum, tt.sum)
			}
		})
	}
}
