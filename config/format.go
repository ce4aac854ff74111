package config

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A Format is another tool's battery format, which an edge (a package of
// edges/) teaches config to read by registering it from its init, as a
// database/sql driver does: config's own formats, native TOML and JSON,
// import nothing foreign, and cli links the edges it wants.
//
// A format's files are of one of three kinds, each with its fields:
//
//   - a file of its own syntax (YAML): Exts and Claims say which files, Load
//     reads them;
//   - a JSON file whose top-level object is the format's: ClaimsJSON says
//     which objects, Load reads the file;
//   - one test per JSON object (a line of a JSONL battery, an element of a
//     JSON array, a JSON file's lone object): Records. config frames the
//     objects, says where each is, and finishes the tests, so that a JSONL
//     file may mix the lines of several formats.
type Format struct {
	// Name is the tool's, for messages ("promptfoo").
	Name string
	// Exts are the extensions that say a file is this format's whatever it
	// holds (".yaml"), lower case with the dot.
	Exts []string
	// Syntax is what its files are written in ("yaml", "json", "toml"),
	// for the nesting cap checked before Claims, Load, LoadJudge or IsJudge
	// sees a file (CheckNesting); empty checks brackets only.
	Syntax string
	// Claims reports whether the format reads a file that is neither JSON,
	// JSONL nor TOML and whose extension no format claims.
	Claims func(f File) bool
	// ClaimsJSON reports whether the format reads a JSON battery whose top
	// level is this object (decoded with numbers as json.Number), which is
	// no native battery: it has no "tests".
	ClaimsJSON func(top map[string]any) bool
	// Load reads a file that Exts, Claims or ClaimsJSON gave the format, as
	// a battery. Its warnings go to f.Notes; its tests are finished with
	// FinishTests.
	Load func(f File) ([]Test, error)
	// Records reads the format's one-test objects; nil when it has none.
	Records *Records
	// LoadJudge reads the file as a judge battery; nil when the format
	// holds none. IsJudge tells such a file from the format's batteries
	// (IsQualifyConfig asks it).
	LoadJudge func(f File) ([]JudgeTest, error)
	IsJudge   func(data []byte) bool
}

// File is a battery file as a Format sees it.
type File struct {
	Path  string
	Data  []byte
	Notes *Notes // what the file asks for that pitwall will not do
	// Outside lets ReadRef read files outside the battery's folder: the
	// config's allow_outside_files.
	Outside bool
}

// Records is how a format whose tests are one JSON object each is read.
type Records struct {
	// Claims reports whether an object is one of the format's tests, by
	// its keys. No two formats claim one object: config asks them in the
	// order they registered, which is no order an edge can rely on.
	Claims func(m map[string]any) bool
	// Read reads one object that Claims took, or that Arrays or Lines gave
	// the format, as a test. It reports what is wrong to r.Col at paths
	// Under r.At, and ok is false when there is no test; config sets the
	// test's Source and finishes it.
	Read func(r Record) (t Test, ok bool)
	// Arrays says that a JSON array whose first element the format claims
	// holds its tests, its other elements read by it too unless another
	// format claims them. Without it such an array is native tests, whose
	// objects the format's resemble (prompt-prix's).
	Arrays bool
	// Lines says the format reads the lines of a JSONL battery that no
	// format claims: JSONL is its format first (prompt-prix's). One format
	// at most.
	Lines bool
}

// A Record is one test's object in a JSON or JSONL battery, as
// Records.Read sees it.
type Record struct {
	Fields map[string]any // decoded with numbers as json.Number
	// ID is the id of a record that names none: the file's stem and the
	// record's number (tools-3).
	ID    string
	At    string // the record's path, for Col.Add (tests[2])
	Col   *Collector
	Notes *Notes
}

var (
	formatsMu sync.RWMutex
	formats   []Format
)

// RegisterFormat adds a format. It panics on a second format of the same
// name, which is two edges claiming one tool, on a second format whose
// Records reads Lines, and on Records without Claims or Read.
func RegisterFormat(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if slices.ContainsFunc(formats, func(g Format) bool { return g.Name == f.Name }) {
		panic(fmt.Sprintf("config: format %q registered twice", f.Name))
	}
	if r := f.Records; r != nil {
		if r.Claims == nil || r.Read == nil {
			panic(fmt.Sprintf("config: format %q: Records needs Claims and Read", f.Name))
		}
		if r.Lines && slices.ContainsFunc(formats, func(g Format) bool { return g.Records != nil && g.Records.Lines }) {
			panic(fmt.Sprintf("config: format %q: a second format reads the JSONL lines no format claims", f.Name))
		}
	}
	formats = append(formats, f)
}

// formatFor is the registered format that reads f: the one whose Exts has
// f's extension, else the first whose Claims says so; nil for none. No
// format's code sees a file nested past the cap of its syntax: that is the
// error instead.
func formatFor(f File) (*Format, error) {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	ext := strings.ToLower(filepath.Ext(f.Path))
	for i := range formats {
		if slices.Contains(formats[i].Exts, ext) {
			return &formats[i], formats[i].checkNesting(f)
		}
	}
	for i := range formats {
		if formats[i].Claims == nil {
			continue
		}
		if err := formats[i].checkNesting(f); err != nil {
			return nil, err
		}
		if formats[i].Claims(f) {
			return &formats[i], nil
		}
	}
	return nil, nil
}

// checkNesting is CheckNesting for a file of the format's syntax (brackets
// when it names none).
func (format *Format) checkNesting(f File) error {
	return CheckNesting(f.Path, f.Data, cmp.Or(format.Syntax, "brackets"))
}

// jsonFormatFor is the registered format whose ClaimsJSON takes top, or nil.
func jsonFormatFor(top map[string]any) *Format {
	return findFormat(func(f *Format) bool { return f.ClaimsJSON != nil && f.ClaimsJSON(top) })
}

// recordFormatFor is the registered format whose Records claims m, or nil.
func recordFormatFor(m map[string]any) *Format {
	return findFormat(func(f *Format) bool { return f.Records != nil && f.Records.Claims(m) })
}

// arrayFormatFor is the format whose records list is, when it claims the
// first and reads arrays; nil for an array of native tests.
func arrayFormatFor(list []any) *Format {
	if len(list) == 0 {
		return nil
	}
	m, ok := list[0].(map[string]any)
	if !ok {
		return nil
	}
	if f := recordFormatFor(m); f != nil && f.Records.Arrays {
		return f
	}
	return nil
}

// linesFormat is the format that reads the JSONL lines no format claims,
// or nil.
func linesFormat() *Format {
	return findFormat(func(f *Format) bool { return f.Records != nil && f.Records.Lines })
}

func findFormat(match func(*Format) bool) *Format {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	for i := range formats {
		if match(&formats[i]) {
			return &formats[i]
		}
	}
	return nil
}

// judgeFormatFor is the registered format with judge batteries whose Exts
// has path's extension, or nil.
func judgeFormatFor(path string) *Format {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	ext := strings.ToLower(filepath.Ext(path))
	for i := range formats {
		if formats[i].LoadJudge != nil && slices.Contains(formats[i].Exts, ext) {
			return &formats[i]
		}
	}
	return nil
}

// formatExts lists the extensions registered formats claim, for a message.
func formatExts() []string {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	var out []string
	for _, f := range formats {
		out = append(out, f.Exts...)
	}
	return out
}
