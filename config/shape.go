package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var durationType = reflect.TypeFor[time.Duration]()

// checkShape walks decoded generic data (TOML or JSON decoded into any)
// against the Go type it is about to be decoded into, and reports every
// unknown key and every value of the wrong type with its indexed path. The
// decoders stop at the first mismatch and name no array index; this names
// them all, each with a hint.
//
// tag is the struct tag that names keys: "toml" or "json".
func checkShape(c *Collector, v any, t reflect.Type, tag, path string) {
	CheckShapeWith(c, v, t, tag, path, nil)
}

// CheckShapeWith is checkShape that hands unknown keys to unknown instead
// of reporting them, for formats whose own tools ignore keys they do not
// know (prompt-prix, promptfoo): those become notes, not errors.
func CheckShapeWith(c *Collector, v any, t reflect.Type, tag, path string, unknown func(path, key string)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return // JSON null: the field keeps its zero value
	}
	key := lastKey(path)
	switch {
	case t == durationType:
		s, ok := v.(string)
		if !ok {
			if n, isNum := asNumber(v); isNum {
				c.Add(path, fmt.Sprintf("write %s (units: ms, s, m, h)", assign(key, `"`+n+`s"`, tag)),
					"must be a duration string, not a bare number")
				return
			}
			c.Add(path, "write e.g. "+assign(key, `"30s"`, tag), "must be a duration string, got %s", Describe(v, tag))
			return
		}
		if _, err := time.ParseDuration(s); err != nil {
			c.Add(path, "write e.g. "+assign(key, `"30s"`, tag)+" (units: ms, s, m, h)", "%q is not a duration", s)
		}
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		return
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			c.Add(path, tableHint(path, key, tag), "must be %s, got %s", aTable(tag), Describe(v, tag))
			return
		}
		fields, names := fieldsByTag(t, tag)
		for _, k := range sortedKeys(m) {
			f, ok := fields[k]
			if !ok {
				if unknown != nil {
					unknown(path, k)
					continue
				}
				c.Add(JoinPath(path, k), DidYouMean(k, names), "unknown key %q", k)
				continue
			}
			CheckShapeWith(c, m[k], f.Type, tag, JoinPath(path, k), unknown)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			c.Add(path, tableHint(path, key, tag), "must be %s, got %s", aTable(tag), Describe(v, tag))
			return
		}
		for _, k := range sortedKeys(m) {
			CheckShapeWith(c, m[k], t.Elem(), tag, JoinPath(path, k), unknown)
		}
	case reflect.Slice:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice {
			hint := "write e.g. " + assign(key, `["a", "b"]`, tag)
			elem := t.Elem()
			for elem.Kind() == reflect.Pointer {
				elem = elem.Elem()
			}
			switch {
			case tag == "toml" && elem.Kind() == reflect.Struct:
				hint = fmt.Sprintf("write each entry as a [[%s]] table", unindexed(path))
			case elem.Kind() == reflect.Struct || elem.Kind() == reflect.Map:
				hint = "write e.g. " + assign(key, `[{ ... }, { ... }]`, tag)
			}
			c.Add(path, hint, "must be an array, got %s", Describe(v, tag))
			return
		}
		for i := range rv.Len() {
			CheckShapeWith(c, rv.Index(i).Interface(), t.Elem(), tag, IndexPath(path, i), unknown)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			c.Add(path, "put the value in quotes: "+assign(key, `"..."`, tag), "must be a string, got %s", Describe(v, tag))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			c.Add(path, fmt.Sprintf("write %s or %s, without quotes", assign(key, "true", tag), assign(key, "false", tag)), "must be true or false, got %s", Describe(v, tag))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !isInteger(v) {
			c.Add(path, "write a whole number without quotes, e.g. "+assign(key, "2", tag), "must be a whole number, got %s", Describe(v, tag))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := asNumber(v); !ok {
			c.Add(path, "write a number without quotes, e.g. "+assign(key, "0.5", tag), "must be a number, got %s", Describe(v, tag))
		}
	}
}

// fieldsByTag indexes a struct's fields by the key name in tag.
func fieldsByTag(t reflect.Type, tag string) (map[string]reflect.StructField, []string) {
	fields := map[string]reflect.StructField{}
	var names []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f
		names = append(names, name)
	}
	return fields, names
}

func lastKey(path string) string {
	p := path
	for strings.HasSuffix(p, "]") {
		p = parentPath(p)
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// assign writes key and value as the file's format would: key = value in
// TOML, "key": value in JSON.
func assign(key, value, tag string) string {
	if tag == "toml" {
		return key + " = " + value
	}
	return fmt.Sprintf("%q: %s", key, value)
}

func tableHint(path, key, tag string) string {
	switch {
	case strings.HasSuffix(path, "]"):
		return fmt.Sprintf("each entry of %s is %s: { ... }", key, aTable(tag))
	case tag == "toml":
		return fmt.Sprintf("write it as a [%s] section or %s = { ... }", unindexed(path), key)
	}
	return fmt.Sprintf("write \"%s\": { ... }", key)
}

// aTable is "a table" in TOML, "an object" in JSON.
func aTable(tag string) string {
	if tag == "toml" {
		return "a table"
	}
	return "an object"
}

// unindexed drops a path's array indices, as a TOML header writes it:
// tests[0].checks -> tests.checks.
func unindexed(path string) string {
	return arrayIndex.ReplaceAllString(path, "")
}

var arrayIndex = regexp.MustCompile(`\[\d+\]`)

func isInteger(v any) bool {
	switch n := v.(type) {
	case int64, int:
		return true
	case json.Number:
		_, err := n.Int64()
		return err == nil
	}
	return false
}

// asNumber reports whether v is numeric, and its text.
func asNumber(v any) (string, bool) {
	switch n := v.(type) {
	case int64:
		return strconv.FormatInt(n, 10), true
	case int:
		return strconv.Itoa(n), true
	case float64:
		return strconv.FormatFloat(n, 'g', -1, 64), true
	case json.Number:
		return n.String(), true
	}
	return "", false
}

// Describe names a decoded value's type for a message: the string "two",
// the number 3, a table.
func Describe(v any, tag string) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		return aTable(tag)
	case time.Time:
		return "a date"
	}
	if n, ok := asNumber(v); ok {
		return "the number " + n
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map:
		return aTable(tag)
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a number"
	}
	return "a value of another kind"
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
