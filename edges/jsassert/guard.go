package jsassert

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// The bounds of one run. goja checks for an interrupt between
// instructions, so a loop is stopped within a poll of either bound; one
// built-in call is stopped only when it returns, which is why the built-ins
// that build a large string or array in one call check their size first
// (maxLength), and typed arrays, which allocate their whole length at once,
// are not offered.
const (
	// Timeout is the wall time one run may take.
	Timeout = time.Second
	// MemoryBudget is what the process may allocate while one run goes on.
	// goja has no allocator of its own to count, so this counts every
	// allocation in the process during the run: other work can make a run
	// stop early, never late.
	MemoryBudget = 64 << 20
	// maxLength is the longest string or array a guarded built-in makes.
	maxLength = 1 << 24
	// maxCallDepth stops runaway recursion with a RangeError of its own.
	maxCallDepth = 4096

	pollEvery = 2 * time.Millisecond
)

// bounds are Timeout and MemoryBudget; tests lower them to see each one
// stop a run on its own.
var bounds = struct {
	timeout time.Duration
	memory  uint64
}{Timeout, MemoryBudget}

type stopped struct{ why string }

func (s stopped) Error() string { return s.why }

// guard watches one runtime: it interrupts the run when it passes the
// time or the memory bound. The returned func ends the watch and returns
// once the watcher has stopped, so no watcher outlives its run.
func guard(vm *goja.Runtime) func() {
	timeout, budget := bounds.timeout, bounds.memory
	done, finished := make(chan struct{}), make(chan struct{})
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	start := sample[0].Value.Uint64()
	go func() {
		defer close(finished)
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-deadline.C:
				vm.Interrupt(stopped{fmt.Sprintf("the script ran longer than %v and was stopped", timeout)})
				return
			case <-tick.C:
				metrics.Read(sample)
				if sample[0].Value.Uint64()-start > budget {
					vm.Interrupt(stopped{fmt.Sprintf("the script allocated more than %d MiB and was stopped", budget>>20)})
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// preludeSource guards the one-step allocators and returns the function
// that turns JSON text into the value a script is given (see Input.Output).
var preludeSource = `(function () {
	"use strict";
	const MAX = ` + strconv.Itoa(maxLength) + `;
	const tooBig = (what) => { throw new RangeError(what + " would exceed " + MAX + " elements, pitwall's limit for one step") };
	const wrap = (obj, name, check) => {
		const orig = obj[name];
		if (typeof orig !== "function") return;
		Object.defineProperty(obj, name, { value: function (...args) { check(this, args); return orig.apply(this, args) }, writable: true, configurable: true });
	};
	const len = (x) => (x == null ? 0 : Math.max(0, Number(x.length) || 0));
	wrap(String.prototype, "repeat", (s, a) => { if (String(s).length * Number(a[0]) > MAX) tooBig("repeat") });
	wrap(String.prototype, "padStart", (s, a) => { if (Number(a[0]) > MAX) tooBig("padStart") });
	wrap(String.prototype, "padEnd", (s, a) => { if (Number(a[0]) > MAX) tooBig("padEnd") });
	for (const name of Object.getOwnPropertyNames(Array.prototype)) {
		if (name === "constructor") continue;
		wrap(Array.prototype, name, (arr) => { if (len(arr) > MAX) tooBig("an array of length " + len(arr)) });
	}
	wrap(Array.prototype, "join", (arr, a) => { if (len(arr) * (a[0] === undefined ? 1 : String(a[0]).length + 1) > MAX) tooBig("join") });
	wrap(Array, "from", (c, a) => { if (len(a[0]) > MAX) tooBig("Array.from") });
	const OrigArray = Array;
	globalThis.Array = new Proxy(OrigArray, {
		construct(t, a, nt) { if (a.length === 1 && typeof a[0] === "number" && a[0] > MAX) tooBig("new Array"); return Reflect.construct(t, a, nt) },
		apply(t, self, a) { if (a.length === 1 && typeof a[0] === "number" && a[0] > MAX) tooBig("Array"); return Reflect.apply(t, self, a) },
	});
	for (const name of ["ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array", "Uint8ClampedArray",
		"Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"]) {
		delete globalThis[name];
	}
	const noop = () => {};
	globalThis.console = { log: noop, info: noop, warn: noop, error: noop, debug: noop };
	const parse = JSON.parse;
	return function (text) { return parse(text) };
})()`

var (
	preludeOnce sync.Once
	preludeProg *goja.Program
)

// prelude runs the guards in vm and returns its JSON-to-value function.
func prelude(vm *goja.Runtime) (goja.Callable, error) {
	preludeOnce.Do(func() { preludeProg = goja.MustCompile("prelude", preludeSource, true) })
	v, err := vm.RunProgram(preludeProg)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("internal: prelude returned no function")
	}
	return fn, nil
}

// frame finds the script's line and column in a goja stack frame.
var frame = regexp.MustCompile(`script:(\d+):(\d+)`)

// runError says why a run failed, in words about the script.
func runError(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if e, ok := ie.Value().(error); ok {
			return e
		}
		return errors.New("the script was stopped")
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return fmt.Errorf("the script recursed deeper than %d calls", maxCallDepth)
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		msg := "threw " + clip(ex.Value().String(), 200)
		if m := frame.FindStringSubmatch(ex.Error()); m != nil {
			msg += " (line " + m[1] + ")"
		}
		return errors.New(msg)
	}
	return err
}

// syntaxError cleans a compile error to "syntax error: Line 2:5 ...".
func syntaxError(err error) error {
	msg := err.Error()
	for _, p := range []string{"SyntaxError: ", "script: ", "(anonymous): "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return errors.New("syntax error: " + msg)
}
