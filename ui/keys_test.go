package ui

import (
	"reflect"
	"testing"
	"unsafe"

	"charm.land/bubbles/v2/key"
)

// Every binding in every component's key map answers some key and has
// the words its help would show, so that no key is handled unlisted.
func TestEveryBindingHasKeysAndHelp(t *testing.T) {
	var walk func(path string, v reflect.Value)
	n := 0
	walk = func(path string, v reflect.Value) {
		// The embedded scrollKeyMap is unexported: read its fields in place.
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
		if b, ok := v.Interface().(key.Binding); ok {
			n++
			if len(b.Keys()) == 0 || b.Help().Key == "" || b.Help().Desc == "" {
				t.Errorf("%s: keys %q, help %+v: want keys and help", path, b.Keys(), b.Help())
			}
			return
		}
		if v.Kind() != reflect.Struct {
			t.Fatalf("%s: a %s in a key map", path, v.Type())
		}
		for i := range v.NumField() {
			walk(path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	}
	walk("keyMap", reflect.ValueOf(newKeyMap()).Elem())
	if n < 50 {
		t.Errorf("walked %d bindings; the key maps hold more", n)
	}
}
