package check

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSchemaValidates(t *testing.T) {
	person := `{
		"type": "object",
		"required": ["name", "age"],
		"additionalProperties": false,
		"properties": {
			"name": {"type": "string", "minLength": 1, "maxLength": 10},
			"age": {"type": "integer", "minimum": 0, "maximum": 150},
			"role": {"enum": ["admin", "user"]},
			"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
			"code": {"type": "string", "pattern": "^[A-Z]{3}$"},
			"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
			"kind": {"const": "person"},
			"note": {"type": ["string", "null"]}
		}
	}`
	tests := []struct {
		name   string
		schema string
		value  string
		errHas []string // nil = valid
	}{
		{"valid", person, `{"name": "Ada", "age": 36, "role": "admin", "tags": ["x"], "code": "ABC", "ratio": 0.5, "kind": "person", "note": null}`, nil},
		{"integer written as 36.0", person, `{"name": "Ada", "age": 36.0}`, nil},
		{"missing required", person, `{"name": "Ada"}`, []string{`$: missing required property "age"`}},
		{"wrong type", person, `{"name": "Ada", "age": "36"}`, []string{`$.age: want integer, got string "36"`}},
		{"fraction is not an integer", person, `{"name": "Ada", "age": 36.5}`, []string{"$.age: want integer"}},
		{"below minimum", person, `{"name": "Ada", "age": -1}`, []string{"less than the minimum 0"}},
		{"above maximum", person, `{"name": "Ada", "age": 200}`, []string{"more than the maximum 150"}},
		{"extra property", person, `{"name": "Ada", "age": 1, "email": "a@b"}`, []string{`property "email" is not allowed`}},
		{"enum", person, `{"name": "Ada", "age": 1, "role": "root"}`, []string{`$.role: string "root" is not one of ["admin", "user"]`}},
		{"items", person, `{"name": "Ada", "age": 1, "tags": ["a", 2]}`, []string{"$.tags[1]: want string, got number 2"}},
		{"max items", person, `{"name": "Ada", "age": 1, "tags": ["a", "b", "c"]}`, []string{"3 items, want at most 2"}},
		{"min length counts characters", person, `{"name": "", "age": 1}`, []string{"want at least 1"}},
		{"max length counts characters", person, `{"name": "ÅÅÅÅÅÅÅÅÅÅ", "age": 1}`, nil},
		{"pattern", person, `{"name": "Ada", "age": 1, "code": "abc"}`, []string{"does not match"}},
		{"exclusive bounds", person, `{"name": "Ada", "age": 1, "ratio": 1}`, []string{"not less than 1"}},
		{"const", person, `{"name": "Ada", "age": 1, "kind": "robot"}`, []string{`want string "person"`}},
		{"type list", person, `{"name": "Ada", "age": 1, "note": 3}`, []string{"want string or null"}},
		{"not an object", person, `[1]`, []string{"$: want object, got array"}},
		{"errors are capped", person, `{"name": 1, "age": "x", "role": "z", "tags": 3, "code": 4}`, []string{"$.age", "$.code", "$.name"}},
		{"additionalProperties schema", `{"additionalProperties": {"type": "number"}}`, `{"a": 1, "b": "x"}`, []string{`$.b: want number`}},
		{"odd keys are quoted in paths", `{"properties": {"a b": {"type": "string"}}}`, `{"a b": 1}`, []string{`$["a b"]: want string`}},
		{"false schema", `{"properties": {"x": false}}`, `{"x": 1}`, []string{"$.x: no value is allowed"}},
		{"true schema", `true`, `{"anything": [1, 2]}`, nil},
		{"unknown keywords ignored", `{"$schema": "x", "title": "t", "format": "email", "type": "string"}`, `"not an email"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw, v any
			if err := json.Unmarshal([]byte(tt.schema), &raw); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.value), &v); err != nil {
				t.Fatal(err)
			}
			s, err := compileSchema(raw)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			errs := s.validate(v)
			if tt.errHas == nil {
				if len(errs) > 0 {
					t.Fatalf("errors %v, want none", errs)
				}
				return
			}
			if len(errs) > maxSchemaErrors {
				t.Errorf("%d errors, want at most %d", len(errs), maxSchemaErrors)
			}
			all := strings.Join(errs, "\n")
			for _, want := range tt.errHas {
				if !strings.Contains(all, want) {
					t.Errorf("errors %q do not contain %q", all, want)
				}
			}
		})
	}
}

func TestSchemaAcceptsTOMLShapes(t *testing.T) {
	// BurntSushi/toml decodes integers as int64 and arrays of tables as
	// []map[string]any; the validator must read them like JSON.
	raw := map[string]any{
		"type":     "object",
		"required": []string{"n"},
		"properties": map[string]any{
			"n":  map[string]any{"type": "integer", "maximum": int64(5)},
			"xs": map[string]any{"type": "array", "items": map[string]any{"enum": []any{int64(1), int64(2)}}},
		},
	}
	s, err := compileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	if errs := s.validate(map[string]any{"n": 5.0, "xs": []any{1.0, 2.0}}); len(errs) > 0 {
		t.Errorf("valid value rejected: %v", errs)
	}
	if errs := s.validate(map[string]any{"n": 6.0, "xs": []any{3.0}}); len(errs) != 2 {
		t.Errorf("got errors %v, want the maximum and the enum", errs)
	}
}

func TestSchemaCompileErrors(t *testing.T) {
	tests := []struct {
		schema string
		errHas string
	}{
		{`"object"`, "must be an object or a boolean"},
		{`{"type": "text"}`, "unknown type"},
		{`{"type": ["string", 1]}`, "unknown type"},
		{`{"properties": []}`, "properties: must be an object"},
		{`{"properties": {"a": 1}}`, "$.properties.a: schema must be"},
		{`{"required": "a"}`, "required: must be a list"},
		{`{"required": [1]}`, "not a property name"},
		{`{"items": "string"}`, "$.items: schema must be"},
		{`{"enum": "a"}`, "enum: must be a list"},
		{`{"minimum": "0"}`, "minimum: must be a number"},
		{`{"maxLength": -1}`, "non-negative integer"},
		{`{"minItems": 1.5}`, "non-negative integer"},
		{`{"pattern": "(("}`, "pattern"},
		{`null`, "schema is empty"},
	}
	for _, tt := range tests {
		var raw any
		if err := json.Unmarshal([]byte(tt.schema), &raw); err != nil {
			t.Fatal(err)
		}
		_, err := compileSchema(raw)
		if err == nil || !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("compileSchema(%s) = %v, want an error containing %q", tt.schema, err, tt.errHas)
		}
	}
}
