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
	// Load reads the file as a battery. Its warnings go to f.Notes; its
	// tests are finished with FinishTests.
	Load func(f File) ([]Test, error)
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
}

var (
	formatsMu sync.RWMutex
	formats   []Format
)

// RegisterFormat adds a format. It panics on a second format of the same
// name, which is two edges claiming one tool.
func RegisterFormat(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if slices.ContainsFunc(formats, func(g Format) bool { return g.Name == f.Name }) {
		panic(fmt.Sprintf("config: format %q registered twice", f.Name))
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
