package history

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// A Chrome DevTools Protocol client over --remote-debugging-pipe: Chromium
// reads commands on fd 3 and writes replies and events on fd 4, each JSON
// message ended by a NUL byte. The standard library is all it needs.

// chromiumPath is the Chromium on PATH, or "".
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

type cdpEvent struct {
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
}

type cdpReply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type browser struct {
	cmd *exec.Cmd
	in  io.WriteCloser

	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpReply
	events  []cdpEvent
	arrived chan struct{} // closed and replaced on each event
	done    chan struct{} // closed when the reader stops
	readErr error
}

// startBrowser starts a headless Chromium and reads its pipe until it exits.
// The browser is killed at the end of the test.
func startBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	toChrome, chromeIn, err := os.Pipe() // chrome reads toChrome as fd 3
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe() // chrome writes fromChrome as fd 4
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
		"--user-data-dir="+t.TempDir(), "--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-sync", "--disable-component-update", "--mute-audio",
		"--hide-scrollbars", "--force-color-profile=srgb", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	toChrome.Close()
	fromChrome.Close()
	b := &browser{cmd: cmd, in: chromeIn, waiting: map[int]chan cdpReply{}, arrived: make(chan struct{}), done: make(chan struct{})}
	go b.read(bufio.NewReader(chromeOut))
	t.Cleanup(func() {
		chromeIn.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		chromeOut.Close()
		<-b.done
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	})
	return b
}

func (b *browser) read(r *bufio.Reader) {
	defer close(b.done)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = err
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		msg = msg[:len(msg)-1]
		var probe struct {
			ID int `json:"id"`
		}
		if json.Unmarshal(msg, &probe) != nil {
			continue
		}
		b.mu.Lock()
		if probe.ID != 0 {
			var rep cdpReply
			_ = json.Unmarshal(msg, &rep)
			if ch := b.waiting[probe.ID]; ch != nil {
				ch <- rep
				delete(b.waiting, probe.ID)
			}
		} else {
			var ev cdpEvent
			_ = json.Unmarshal(msg, &ev)
			b.events = append(b.events, ev)
			close(b.arrived)
			b.arrived = make(chan struct{})
		}
		b.mu.Unlock()
	}
}

// call sends a command (to a page's session when session is not "") and
// decodes its result into out (nil to drop it).
func (b *browser) call(ctx context.Context, session, method string, params any, out any) error {
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return fmt.Errorf("%s: the browser is gone: %w", method, b.readErr)
	}
	b.next++
	id := b.next
	ch := make(chan cdpReply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params, "sessionId": session})
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the browser closed its pipe", method)
		}
		if rep.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, rep.Error.Message, rep.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(rep.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// waitEvent waits for an event of a session by method, seen after index from.
func (b *browser) waitEvent(ctx context.Context, session, method string, from int) (cdpEvent, error) {
	for {
		b.mu.Lock()
		for _, ev := range b.events[from:] {
			if ev.Method == method && ev.SessionID == session {
				b.mu.Unlock()
				return ev, nil
			}
		}
		from = len(b.events)
		arrived := b.arrived
		b.mu.Unlock()
		select {
		case <-arrived:
		case <-b.done:
			return cdpEvent{}, errors.New("the browser exited while waiting for " + method)
		case <-ctx.Done():
			return cdpEvent{}, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

// eventCount is how many events have arrived.
func (b *browser) eventCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.events)
}

// eventsSoFar is a copy of the events so far.
func (b *browser) eventsSoFar() []cdpEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]cdpEvent(nil), b.events...)
}

// page is one tab, attached with its own session.
type page struct {
	b       *browser
	session string
}

// newPage opens a blank tab of width × height CSS pixels with the Runtime,
// Log, Network and Page domains on.
func (b *browser) newPage(ctx context.Context, width, height int) (*page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, err
	}
	p := &page{b: b, session: att.SessionID}
	for _, m := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		if err := b.call(ctx, p.session, m, nil, nil); err != nil {
			return nil, err
		}
	}
	err := b.call(ctx, p.session, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return p, err
}

// navigate loads url and waits for its load event.
func (p *page) navigate(ctx context.Context, url string) error {
	from := p.b.eventCount()
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.b.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	_, err := p.b.waitEvent(ctx, p.session, "Page.loadEventFired", from)
	return err
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func (p *page) eval(ctx context.Context, expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.b.call(ctx, p.session, "Runtime.evaluate",
		map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res)
	if err != nil {
		return err
	}
	if e := res.ExceptionDetails; e != nil {
		d := e.Text
		if e.Exception != nil {
			d = e.Exception.Description
		}
		return fmt.Errorf("evaluate %q: %s", expr, d)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// click presses and releases the left mouse button at (x, y), as a user
// would: the page sees real mouse events, not a synthetic click().
func (p *page) click(ctx context.Context, x, y float64) error {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		params := map[string]any{"type": typ, "x": x, "y": y}
		if typ != "mouseMoved" {
			params["button"], params["clickCount"] = "left", 1
		}
		if err := p.b.call(ctx, p.session, "Input.dispatchMouseEvent", params, nil); err != nil {
			return err
		}
	}
	return nil
}

// screenshot captures the viewport as PNG.
func (p *page) screenshot(ctx context.Context) ([]byte, error) {
	var shot struct {
		Data []byte `json:"data"` // base64 in JSON, decoded by encoding/json
	}
	err := p.b.call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	return shot.Data, err
}

// problems lists what the page reported that a clean page would not: an
// uncaught exception, a console error, an error log entry (a blocked
// script or a failed load), a request that is not to a file or data URL.
func (p *page) problems() []string {
	var out []string
	for _, ev := range p.b.eventsSoFar() {
		if ev.SessionID != p.session {
			continue
		}
		switch ev.Method {
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(ev.Params))
		case "Runtime.consoleAPICalled":
			var c struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(ev.Params, &c)
			if c.Type == "error" || c.Type == "assert" {
				out = append(out, "console "+c.Type+": "+string(ev.Params))
			}
		case "Log.entryAdded":
			var l struct {
				Entry struct {
					Level string `json:"level"`
					Text  string `json:"text"`
				} `json:"entry"`
			}
			_ = json.Unmarshal(ev.Params, &l)
			if l.Entry.Level == "error" {
				out = append(out, "log "+l.Entry.Level+": "+l.Entry.Text)
			}
		case "Network.requestWillBeSent":
			var r struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			_ = json.Unmarshal(ev.Params, &r)
			u := r.Request.URL
			if !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "about:") {
				out = append(out, "network request: "+u)
			}
		}
	}
	return out
}

// lockedBuffer is a bytes buffer safe for the process's writer and the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}
