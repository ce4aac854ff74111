package promptfoo

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"pitwall/config"
)

// promptfoo dereferences the whole config before it reads it (json-schema-
// ref-parser's dereference): an object {$ref: "#/pointer"} anywhere is
// replaced by what the JSON pointer names in the same file, and keys beside
// the $ref are laid over an object it names. That is how assertionTemplates
// work: a top-level table of assertions that assert lists name with
// {$ref: "#/assertionTemplates/name"}. The JSON Schemas of the providers'
// tools and functions (their parameters) are left as written, as promptfoo
// leaves them, since a $ref there is the schema's own.
//
// pitwall resolves references within the file; one to another file or a URL
// is an error naming it, rather than an assertion that silently checks
// nothing.

// maxRefValues bounds the values dereferencing may produce, so that a few
// lines of references to references cannot expand into millions.
const maxRefValues = 1 << 20

type derefer struct {
	root  any
	col   *config.Collector
	stack []string // the pointers being resolved, for cycles
	made  int
	over  bool
}

// dereference returns top with every $ref within the file resolved; errors
// go to col at the reference's place.
func dereference(col *config.Collector, top any) any {
	d := &derefer{root: top, col: col}
	return d.walk(top, "")
}

func (d *derefer) walk(v any, at string) any {
	if d.over {
		return v
	}
	if d.made++; d.made > maxRefValues {
		d.over = true
		d.col.Add(at, "name each template once, not through references to references", "the file's $refs expand into more than %d values", maxRefValues)
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"]; ok {
			return d.resolve(x, ref, at)
		}
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if schemaOfTool(at, k) {
				out[k] = x[k]
				continue
			}
			out[k] = d.walk(x[k], config.JoinPath(at, k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.walk(e, config.IndexPath(at, i))
		}
		return out
	}
	return v
}

// schemaOfTool reports whether key under at is a provider's tool or
// function schema (providers[i].config.tools[j].function.parameters,
// providers[i].config.functions[j].parameters), which promptfoo does not
// dereference.
func schemaOfTool(at, key string) bool {
	if key != "parameters" || !strings.HasPrefix(at, "providers") {
		return false
	}
	return strings.Contains(at, ".config.tools[") && strings.HasSuffix(at, ".function") ||
		strings.Contains(at, ".config.functions[") && strings.HasSuffix(at, "]")
}

func (d *derefer) resolve(obj map[string]any, ref any, at string) any {
	field := config.JoinPath(at, "$ref")
	s, ok := ref.(string)
	if !ok {
		d.col.Add(field, `write "#/assertionTemplates/name" or another JSON pointer into this file`, "$ref must be text, got %s", config.Describe(ref, "json"))
		return obj
	}
	pointer, inFile := strings.CutPrefix(s, "#")
	if !inFile {
		d.col.Add(field, "pitwall resolves $ref within the file (#/...); copy what it names into this file", "$ref %q names another file or a URL", s)
		return obj
	}
	if slices.Contains(d.stack, s) {
		d.col.Add(field, "a reference may not lead back to itself", "$ref %q is circular (%s)", s, strings.Join(append(d.stack, s), " → "))
		return obj
	}
	target, err := lookupPointer(d.root, pointer)
	if err != nil {
		d.col.Add(field, "the pointer is #/key/key/index from the top of the file", "$ref %q: %v", s, err)
		return obj
	}
	d.stack = append(d.stack, s)
	got := d.walk(target, at)
	d.stack = d.stack[:len(d.stack)-1]
	if len(obj) == 1 {
		return got
	}
	// Keys beside the $ref extend an object it names, as
	// json-schema-ref-parser merges them.
	base, isObj := got.(map[string]any)
	if !isObj {
		d.col.Add(at, "keys beside a $ref extend an object; it names something else", "$ref %q names %s, which keys beside it cannot extend", s, config.Describe(got, "json"))
		return obj
	}
	out := maps.Clone(base)
	for k, v := range obj {
		if k != "$ref" {
			out[k] = d.walk(v, config.JoinPath(at, k))
		}
	}
	return out
}

// lookupPointer follows a JSON pointer (RFC 6901, as a URI fragment: "/a/b"
// percent-decoded, ~1 for "/" and ~0 for "~") from root.
func lookupPointer(root any, pointer string) (any, error) {
	if p, err := url.PathUnescape(pointer); err == nil {
		pointer = p
	}
	if pointer == "" {
		return root, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("a pointer starts with /")
	}
	cur := root
	for part := range strings.SplitSeq(pointer[1:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[part]
			if !ok {
				return nil, fmt.Errorf("the file has no %q there", part)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("%q is not an index of a list of %d", part, len(x))
			}
			cur = x[i]
		default:
			return nil, fmt.Errorf("%q is inside %s, which has no keys", part, config.Describe(cur, "json"))
		}
	}
	return cur, nil
}
