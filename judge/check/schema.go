package check

import (
	"fmt"
	"math"
	"pitwall/internal/textutil"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The json-schema check and response_format json_schema validation use a
// small validator of their own. It supports this subset of JSON Schema:
//
//	type                 "object" | "array" | "string" | "number" | "integer" | "boolean" | "null", or a list of them
//	properties           a schema per property
//	required             a list of property names
//	additionalProperties false, or a schema the other properties must meet
//	items                one schema every element must meet
//	enum, const          allowed values (compared as JSON values: 1 == 1.0)
//	minimum, maximum, exclusiveMinimum, exclusiveMaximum   (numbers)
//	minLength, maxLength (strings, in characters), pattern (Go RE2 syntax)
//	minItems, maxItems   (arrays)
//
// A schema may also be the boolean true (anything) or false (nothing). Other
// keywords ($schema, title, description, format, $ref, anyOf, …) are
// ignored, so a richer schema is checked only as far as this subset goes.
type schema struct {
	never      bool // the schema `false`
	types      []string
	properties map[string]*schema
	propNames  []string // sorted, so that errors come in a stable order
	required   []string
	additional *schema // nil: any additional property is fine
	items      *schema
	enum       []any
	hasEnum    bool
	constVal   any
	hasConst   bool
	pattern    *regexp.Regexp

	minimum, maximum, exclusiveMin, exclusiveMax *float64
	minLength, maxLength, minItems, maxItems     *int
}

var schemaTypes = map[string]bool{
	"object": true, "array": true, "string": true, "number": true,
	"integer": true, "boolean": true, "null": true,
}

// compileSchema checks a schema (as decoded from JSON or TOML) and prepares
// it for validation.
func compileSchema(raw any) (*schema, error) {
	v, err := plain(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON-like: %w", err)
	}
	return compileNode(v, "$")
}

func compileNode(v any, at string) (*schema, error) {
	switch n := v.(type) {
	case bool:
		return &schema{never: !n}, nil
	case map[string]any:
		return compileObject(n, at)
	case nil:
		return nil, fmt.Errorf("%s: schema is empty", at)
	default:
		return nil, fmt.Errorf("%s: schema must be an object or a boolean, not %s", at, jsonType(v))
	}
}

func compileObject(n map[string]any, at string) (*schema, error) {
	s := &schema{}
	if t, ok := n["type"]; ok {
		types, err := schemaTypeList(t)
		if err != nil {
			return nil, fmt.Errorf("%s.type: %w", at, err)
		}
		s.types = types
	}
	if p, ok := n["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.properties: must be an object of schemas", at)
		}
		s.properties = make(map[string]*schema, len(props))
		for name, ps := range props {
			c, err := compileNode(ps, at+".properties"+pathKey(name))
			if err != nil {
				return nil, err
			}
			s.properties[name] = c
			s.propNames = append(s.propNames, name)
		}
		sort.Strings(s.propNames)
	}
	if r, ok := n["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return nil, fmt.Errorf("%s.required: must be a list of property names", at)
		}
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s.required: %v is not a property name", at, e)
			}
			s.required = append(s.required, name)
		}
	}
	if a, ok := n["additionalProperties"]; ok {
		c, err := compileNode(a, at+".additionalProperties")
		if err != nil {
			return nil, err
		}
		s.additional = c
	}
	if it, ok := n["items"]; ok {
		c, err := compileNode(it, at+".items")
		if err != nil {
			return nil, err
		}
		s.items = c
	}
	if e, ok := n["enum"]; ok {
		list, ok := e.([]any)
		if !ok {
			return nil, fmt.Errorf("%s.enum: must be a list of values", at)
		}
		s.enum, s.hasEnum = list, true
	}
	if c, ok := n["const"]; ok {
		s.constVal, s.hasConst = c, true
	}
	if p, ok := n["pattern"]; ok {
		ps, ok := p.(string)
		if !ok {
			return nil, fmt.Errorf("%s.pattern: must be a string", at)
		}
		re, err := regexp.Compile(ps)
		if err != nil {
			return nil, fmt.Errorf("%s.pattern: %w", at, err)
		}
		s.pattern = re
	}
	nums := []struct {
		key string
		dst **float64
	}{{"minimum", &s.minimum}, {"maximum", &s.maximum}, {"exclusiveMinimum", &s.exclusiveMin}, {"exclusiveMaximum", &s.exclusiveMax}}
	for _, k := range nums {
		if x, ok := n[k.key]; ok {
			f, ok := x.(float64)
			if !ok {
				return nil, fmt.Errorf("%s.%s: must be a number", at, k.key)
			}
			*k.dst = &f
		}
	}
	counts := []struct {
		key string
		dst **int
	}{{"minLength", &s.minLength}, {"maxLength", &s.maxLength}, {"minItems", &s.minItems}, {"maxItems", &s.maxItems}}
	for _, k := range counts {
		if x, ok := n[k.key]; ok {
			f, ok := x.(float64)
			if !ok || f < 0 || f != math.Trunc(f) {
				return nil, fmt.Errorf("%s.%s: must be a non-negative integer", at, k.key)
			}
			i := int(f)
			*k.dst = &i
		}
	}
	return s, nil
}

func schemaTypeList(t any) ([]string, error) {
	var list []any
	switch x := t.(type) {
	case string:
		list = []any{x}
	case []any:
		list = x
	default:
		return nil, fmt.Errorf("must be a type name or a list of them")
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		name, ok := e.(string)
		if !ok || !schemaTypes[name] {
			return nil, fmt.Errorf("unknown type %v (want object, array, string, number, integer, boolean or null)", e)
		}
		out = append(out, name)
	}
	return out, nil
}

// maxSchemaErrors bounds what a reason lists; the first few say enough.
const maxSchemaErrors = 3

// validate returns the ways v breaks the schema, at most maxSchemaErrors.
func (s *schema) validate(v any) []string {
	var errs []string
	s.check(v, "$", &errs)
	return errs
}

func (s *schema) check(v any, at string, errs *[]string) {
	if len(*errs) >= maxSchemaErrors {
		return
	}
	fail := func(format string, args ...any) {
		if len(*errs) < maxSchemaErrors {
			*errs = append(*errs, at+": "+fmt.Sprintf(format, args...))
		}
	}
	if s.never {
		fail("no value is allowed here")
		return
	}
	if len(s.types) > 0 && !typeAllowed(s.types, v) {
		fail("want %s, got %s", strings.Join(s.types, " or "), describe(v))
		return
	}
	if s.hasConst && !jsonEqual(s.constVal, v) {
		fail("want %s, got %s", describe(s.constVal), describe(v))
	}
	if s.hasEnum && !inEnum(s.enum, v) {
		fail("%s is not one of %s", describe(v), describeList(s.enum))
	}
	switch x := v.(type) {
	case float64:
		s.checkNumber(x, fail)
	case string:
		n := len([]rune(x))
		if s.minLength != nil && n < *s.minLength {
			fail("string of %d characters, want at least %d", n, *s.minLength)
		}
		if s.maxLength != nil && n > *s.maxLength {
			fail("string of %d characters, want at most %d", n, *s.maxLength)
		}
		if s.pattern != nil && !s.pattern.MatchString(x) {
			fail("%s does not match /%s/", describe(x), s.pattern)
		}
	case []any:
		if s.minItems != nil && len(x) < *s.minItems {
			fail("%d items, want at least %d", len(x), *s.minItems)
		}
		if s.maxItems != nil && len(x) > *s.maxItems {
			fail("%d items, want at most %d", len(x), *s.maxItems)
		}
		if s.items != nil {
			for i, e := range x {
				s.items.check(e, at+"["+strconv.Itoa(i)+"]", errs)
			}
		}
	case map[string]any:
		s.checkObject(x, at, errs, fail)
	}
}

func (s *schema) checkNumber(x float64, fail func(string, ...any)) {
	if s.minimum != nil && x < *s.minimum {
		fail("%v is less than the minimum %v", x, *s.minimum)
	}
	if s.maximum != nil && x > *s.maximum {
		fail("%v is more than the maximum %v", x, *s.maximum)
	}
	if s.exclusiveMin != nil && x <= *s.exclusiveMin {
		fail("%v is not more than %v", x, *s.exclusiveMin)
	}
	if s.exclusiveMax != nil && x >= *s.exclusiveMax {
		fail("%v is not less than %v", x, *s.exclusiveMax)
	}
}

func (s *schema) checkObject(x map[string]any, at string, errs *[]string, fail func(string, ...any)) {
	for _, name := range s.required {
		if _, ok := x[name]; !ok {
			fail("missing required property %q", name)
		}
	}
	for _, name := range s.propNames {
		if e, ok := x[name]; ok {
			s.properties[name].check(e, at+pathKey(name), errs)
		}
	}
	if s.additional == nil {
		return
	}
	extra := make([]string, 0, len(x))
	for name := range x {
		if _, known := s.properties[name]; !known {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		if s.additional.never {
			fail("property %q is not allowed", name)
			continue
		}
		s.additional.check(x[name], at+pathKey(name), errs)
	}
}

func typeAllowed(types []string, v any) bool {
	for _, t := range types {
		if jsonType(v) == t {
			return true
		}
		if t == "integer" {
			if f, ok := v.(float64); ok && f == math.Trunc(f) && !math.IsInf(f, 0) {
				return true
			}
		}
	}
	return false
}

// jsonType names v's JSON type; every number is a "number".
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// describe shows a value briefly: its type, and the value itself when short.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + quote(x, 40)
	case float64:
		return "number " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	}
	return jsonType(v)
}

func describeList(vs []any) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, textutil.JSON(v))
	}
	return "[" + textutil.Clip(strings.Join(parts, ", "), 80) + "]"
}

func inEnum(enum []any, v any) bool {
	for _, e := range enum {
		if jsonEqual(e, v) {
			return true
		}
	}
	return false
}

// jsonEqual compares plain JSON values.
func jsonEqual(a, b any) bool {
	return reflect.DeepEqual(a, b)
}

// pathKey renders a property step of a JSON path: .name, or ["odd key"].
func pathKey(name string) string {
	if isIdent(name) {
		return "." + name
	}
	return "[" + strconv.Quote(name) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
