package config

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// simConfig is a config that is valid but for its battery line.
func simConfig(battery string) string {
	return fmt.Sprintf(`models = ["m"]
battery = %q
[[servers]]
name = "s"
kind = "sim"
models = ["m"]
`, battery)
}

func TestFilesThatAreNotRegularAreRefusedBeforeReading(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is there, the bytes are not.
	if err := f.Truncate(maxInputBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cases := []struct {
		name, path, want string
	}{
		{"a directory", dir, "is a directory"},
		{"a file over the size cap", big, fmt.Sprintf("is %d bytes, more than the 64 MiB", maxInputBytes+1)},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct{ name, path, want string }{"/dev/zero", "/dev/zero", "is a character device"})
	}
	if fifo, ok := makeFIFO(t); ok {
		cases = append(cases, struct{ name, path, want string }{"a FIFO with no writer", fifo, "is a named pipe (FIFO)"})
	}
	for _, tt := range cases {
		t.Run(tt.name+" as the battery", func(t *testing.T) {
			p := writeConfig(t, simConfig(tt.path))
			_, err := Load(p, Overrides{}, noEnv)
			wantErr(t, err, p, 2, "battery", "battery "+tt.path+" "+tt.want)
		})
		t.Run(tt.name+" given as a battery", func(t *testing.T) {
			_, err := LoadBattery(tt.path)
			wantErr(t, err, tt.path, 0, "", "cannot read battery: the path "+tt.want)
		})
		t.Run(tt.name+" as the config", func(t *testing.T) {
			_, err := Load(tt.path, Overrides{}, noEnv)
			wantErr(t, err, tt.path, 0, "", "cannot read config: the path "+tt.want)
		})
	}
}

func TestDeepNestingIsRefusedBeforeDecoding(t *testing.T) {
	t.Parallel()
	const deep = 20000
	nested := strings.Repeat("[", deep) + strings.Repeat("]", deep)
	dotted := strings.Repeat("a.", deep) + "a"
	for _, tt := range []struct {
		name, file, body string
		line             int
	}{
		{"TOML arrays", "b.toml", "[[tests]]\nid = \"a\"\nuser = \"hi\"\nx = " + nested + "\n", 4},
		{"TOML inline tables", "b.toml", "\n\nx = " + strings.Repeat("{a=", deep) + "1" + strings.Repeat("}", deep) + "\n", 3},
		{"a TOML dotted key", "b.toml", "[[tests]]\n" + dotted + " = 1\n", 2},
		{"a TOML table header", "b.toml", "[" + dotted + "]\n", 1},
		{"JSON arrays", "b.json", "{\"tests\": [\n{\"id\": \"a\", \"x\": " + nested + "}]}", 2},
		{"JSON objects", "b.json", strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep), 1},
		{"a JSONL line", "b.jsonl", "{\"input\": \"hi\"}\n{\"input\": " + nested + "}\n", 2},
		// Its format is told by parsing it, which must not happen first:
		// this crashed the process (stack overflow) at 914 MB of RSS.
		{"a file of no known extension, 2,000,000 deep", "b.txt",
			"x = " + strings.Repeat("[", 2_000_000) + strings.Repeat("]", 2_000_000) + "\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(p, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadBattery(p)
			wantErr(t, err, p, tt.line, "", fmt.Sprintf("nested more than %d levels deep", MaxNesting))
		})
	}
	t.Run("a config", func(t *testing.T) {
		p := writeConfig(t, simConfig("tools.toml")+"[sim]\nx = "+nested+"\n")
		_, err := Load(p, Overrides{}, noEnv)
		wantErr(t, err, p, 8, "", "nested more than")
	})
}

func TestNestingWithinTheCapStillLoads(t *testing.T) {
	t.Parallel()
	// Brackets, dots and quotes inside strings and comments are text, not
	// nesting; a schema nested a few dozen deep is fine.
	schema := strings.Repeat(`{"type":"object","properties":{"x":`, 40) + `{"type":"string"}` + strings.Repeat("}}", 40)
	body := "# [[[[[[ a.b.c.d.e.f.g.h ]]]]]]\n[[tests]]\nid = \"a\"\n" +
		"user = \"" + strings.Repeat("[", 300) + strings.Repeat(".", 300) + "\"\n" +
		"system = '''\n" + strings.Repeat("{", 300) + "\n'''\n" +
		"[[tests]]\nid = \"b\"\nuser = \"\"\"\n" + strings.Repeat("[", 300) + "\\\"\"\"\"\n" +
		"[[tests.tools]]\ntype = \"function\"\nfunction = { name = \"f\", parameters = " + tomlInline(schema) + " }\n"
	p := filepath.Join(t.TempDir(), "b.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := LoadBattery(p)
	if err != nil {
		t.Fatalf("LoadBattery: %v", err)
	}
	if len(tests) != 2 {
		t.Fatalf("%d tests, want 2", len(tests))
	}
	js := filepath.Join(t.TempDir(), "b.json")
	jbody := `{"tests":[{"id":"a","user":"` + strings.Repeat(`[\"{`, 300) + `","tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}]}]}`
	if err := os.WriteFile(js, []byte(jbody), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBattery(js); err != nil {
		t.Fatalf("LoadBattery(json): %v", err)
	}
	// Unquoted YAML prose: its full stops are not dotted keys.
	yml := filepath.Join(t.TempDir(), "b.yaml")
	prose := strings.Repeat("One more sentence. ", 400)
	if err := os.WriteFile(yml, []byte("prompts:\n  - \"{{q}}\"\ntests:\n  - vars:\n      q: "+prose+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBattery(yml); err != nil {
		t.Fatalf("LoadBattery(yaml): %v", err)
	}
}

// tomlInline writes a JSON object as a TOML inline table.
func tomlInline(js string) string {
	r := strings.NewReplacer(`":`, `" = `, `{"`, `{ "`)
	return r.Replace(js)
}

func TestLocatorMemoryIsLinearInDepth(t *testing.T) {
	// 40 KB of arrays nested 250 deep, the most maxNesting allows, cost
	// 100 times that in the locator and grew with the square of the depth
	// before it stopped recording at maxLocateDepth.
	chain := "x = " + strings.Repeat("[", MaxNesting-6) + strings.Repeat("]", MaxNesting-6) + "\n"
	text := "[[tests]]\nid = \"a\"\n" + strings.Repeat(chain, 40<<10/len(chain))
	json := `{"tests":[{"id":"a","x":[` + strings.Repeat(strings.Repeat("[", MaxNesting-6)+strings.Repeat("]", MaxNesting-6)+",", 40<<10/(2*MaxNesting)) + `1]}]}`
	for _, tt := range []struct {
		name   string
		size   int
		locate func()
	}{
		{"TOML", len(text), func() { locateTOML("b.toml", text) }},
		{"JSON", len(json), func() { _, _ = LocateJSON("b.json", []byte(json), 0, "") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			tt.locate()
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes of text, %d bytes allocated (%.1f×)", tt.size, alloc, float64(alloc)/float64(tt.size))
			if alloc > uint64(20*tt.size) {
				t.Errorf("locating %d bytes allocated %d, more than 20 times the text", tt.size, alloc)
			}
		})
	}
}

func TestDeepValuesTakeTheLineOfTheirRecordedAncestor(t *testing.T) {
	t.Parallel()
	text := "x = [\n" + strings.Repeat("[", 30) + "\n1" + strings.Repeat("]", 30) + "]\n"
	src := locateTOML("b.toml", text)
	deep := "x" + strings.Repeat("[0]", 30)
	if got := src.Line(deep); got != 2 {
		t.Errorf("line of %s = %d, want 2 (its ancestor at depth %d)", deep, got, maxLocateDepth)
	}
	if got := src.Line("x[0]"); got != 2 {
		t.Errorf("line of x[0] = %d, want 2", got)
	}
}

// BenchmarkDeepBatteryRejected is a TOML battery nested 20,000 deep (40 KB
// of arrays). Before the nesting cap and the locator's depth limit it took
// 0.8 s and 651 MB of peak RSS; the cap refuses it before any decoder runs.
func BenchmarkDeepBatteryRejected(b *testing.B) {
	p := filepath.Join(b.TempDir(), "b.toml")
	body := "[[tests]]\nid = \"a\"\nx = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadBattery(p); err == nil {
			b.Fatal("a battery nested 20,000 deep loaded")
		}
	}
}

func TestJudgeBatteriesAndQualifyConfigsAreReadWithTheSameBounds(t *testing.T) {
	t.Parallel()
	const deep = 20000
	dir := t.TempDir()
	deepTOML := filepath.Join(dir, "deep.toml")
	if err := os.WriteFile(deepTOML, []byte("[[tests]]\nx = "+strings.Repeat("[", deep)+strings.Repeat("]", deep)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"a nested judge battery", deepTOML, "nested more than"},
		{"a directory", dir, "is a directory"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct{ name, path, want string }{"/dev/zero", "/dev/zero", "is a character device"})
	}
	if fifo, ok := makeFIFO(t); ok {
		cases = append(cases, struct{ name, path, want string }{"a FIFO", fifo, "is a named pipe (FIFO)"})
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := LoadJudgeBattery(tt.path); err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadJudgeBattery: %v; want it to name %s and say %q", err, tt.path, tt.want)
			}
			cfg := writeConfig(t, simConfig(tt.path))
			ok, err := CheckQualifyConfig(cfg)
			if ok || err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckQualifyConfig with it as the battery: %v, %v; want it to name %s and say %q", ok, err, tt.path, tt.want)
			}
			if ok, err := CheckQualifyConfig(tt.path); ok || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckQualifyConfig of it as the config: %v, %v; want %q", ok, err, tt.want)
			}
		})
	}
}

func TestYAMLNestingCountsIndentationAndSequenceEntries(t *testing.T) {
	t.Parallel()
	var deep, dashes, fine strings.Builder
	for i := range MaxNesting + 1 {
		fmt.Fprintf(&deep, "%sk:\n", strings.Repeat(" ", i))
	}
	dashes.WriteString(strings.Repeat("- ", MaxNesting+1) + "x\n")
	// A block scalar whose text steps in and out, comments and blank lines
	// at any indentation, and sequences of mappings: a few levels, no more.
	fine.WriteString("tests:\n  - vars:\n      q: |\n        def f():\n            if x:\n                return 1\n        done\n\n   # a comment\n  - - a\n    - b\n")
	for _, tt := range []struct {
		name string
		body string
		line int
	}{
		{"block mappings", deep.String(), MaxNesting + 1},
		{"sequence entries on one line", dashes.String(), 1},
		{"an ordinary file", fine.String(), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := yamlTooDeep([]byte(tt.body)); got != tt.line {
				t.Errorf("yamlTooDeep = line %d, want %d", got, tt.line)
			}
		})
	}
}
