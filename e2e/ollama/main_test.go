package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pitwall/internal/reap"
)

// The suite's shared state, set up once by TestMain.
var (
	pitwallBin string        // the pitwall binary built from the repo root
	skipReason string        // why there is no Ollama; every test skips with it
	srv        *ollamaServer // the running Ollama server
	workDir    string        // a temporary directory for configs, ledgers and logs
)

// The models the suite registers with Ollama. tiny-t's template uses .Tools,
// so Ollama reports the tools capability for it and for it alone.
var tinyModels = []struct {
	name  string
	seed  uint64
	tools bool
}{
	{"tiny-a:latest", 1, false},
	{"tiny-b:latest", 2, false},
	{"tiny-t:latest", 3, true},
}

func modelNames() []string {
	var out []string
	for _, m := range tinyModels {
		out = append(out, m.name)
	}
	return out
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	start := time.Now()
	var err error
	workDir, err = os.MkdirTemp("", "pitwall-e2e-ollama-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/ollama:", err)
		return 1
	}
	defer func() {
		if os.Getenv("PITWALL_E2E_KEEP") != "" {
			fmt.Fprintln(os.Stderr, "e2e/ollama: kept", workDir)
			return
		}
		os.RemoveAll(workDir)
	}()

	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/ollama:", err)
		return 1
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		skipReason = "go test -short: the end-to-end suite against a real Ollama runs without -short"
		fmt.Fprintln(os.Stderr, "e2e/ollama: every test that needs Ollama skips:", skipReason)
		return m.Run()
	}
	if why := optedOut(); why != "" {
		return withoutOllama(m, why)
	}
	// However this binary ends (go test's -timeout panics past every
	// defer), the watchdog removes the work folder.
	releaseDir, err := reap.Group(0, workDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/ollama:", err)
		return 1
	}
	defer func() {
		if os.Getenv("PITWALL_E2E_KEEP") != "" {
			releaseDir()
		}
	}()
	if b := os.Getenv("PITWALL_BIN"); b != "" {
		// A pitwall built elsewhere (another checkout, a release).
		pitwallBin = b
		fmt.Fprintln(os.Stderr, "e2e/ollama: testing PITWALL_BIN", b)
	} else {
		pitwallBin = filepath.Join(workDir, "pitwall")
		build := exec.Command("go", "build", "-o", pitwallBin, ".")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e/ollama: go build pitwall failed (PITWALL_BIN=path tests a pitwall built elsewhere): %v\n%s", err, out)
			return 1
		}
	}

	bin, why := findOllama(root)
	if bin == "" {
		return withoutOllama(m, "no Ollama server to test against: "+why)
	}

	srv, err = newOllamaServer(bin, workDir)
	if err == nil {
		err = srv.start()
	}
	if err == nil {
		err = createTinyModels(bin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/ollama: setting up Ollama failed:", err)
		if srv != nil {
			srv.stop()
			dumpLogTail(os.Stderr, srv.logPath, 40)
		}
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e/ollama: %s serving %s on %s (setup %s)\n", bin, strings.Join(modelNames(), ", "), srv.host, time.Since(start).Round(time.Millisecond))
	code := m.Run()
	srv.stop()
	if left := srv.leftovers(); left != "" {
		fmt.Fprintln(os.Stderr, "e2e/ollama: processes left behind after stopping Ollama:", left)
		code = 1
	}
	if code != 0 {
		dumpLogTail(os.Stderr, srv.logPath, 60)
	}
	fmt.Fprintf(os.Stderr, "e2e/ollama: suite wall time %s\n", time.Since(start).Round(time.Millisecond))
	return code
}

// optedOut says why the suite does not use Ollama unless asked to, or ""
// when it was asked. Building Ollama takes minutes on a fresh machine, which
// a plain `go test ./...` should not spend unasked.
func optedOut() string {
	if os.Getenv("PITWALL_OLLAMA_BIN") != "" || os.Getenv("PITWALL_E2E") == "1" {
		return ""
	}
	return "the real-Ollama suite is opt-in: PITWALL_E2E=1 builds Ollama with scripts/install-ollama.sh " +
		"(about 7 minutes cold on two cores, seconds once cached) and runs against it; " +
		"PITWALL_OLLAMA_BIN=path runs against an ollama binary already built"
}

// withoutOllama runs the tests that need no Ollama, every other one
// skipping with why; under CI it fails instead, so that a CI without
// Ollama cannot pass by skipping the suite.
func withoutOllama(m *testing.M, why string) int {
	skipReason = why
	fmt.Fprintln(os.Stderr, "e2e/ollama: every test that needs Ollama skips:", why)
	code := m.Run()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		fmt.Fprintln(os.Stderr, "e2e/ollama: CI is set, so a missing Ollama fails the suite")
		return 1
	}
	return code
}

// requireOllama skips the test when there is no Ollama; the only skip the suite has.
func requireOllama(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// stepContext bounds one step by want and by the test's deadline (reap.Step).
func stepContext(t *testing.T, want time.Duration) (context.Context, context.CancelFunc) {
	return reap.Step(t, want)
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("cannot find the repo root from %s: %w", wd, err)
	}
	return root, nil
}

// findOllama returns $PITWALL_OLLAMA_BIN, or what scripts/install-ollama.sh
// builds (its last stdout line), or "" and why not.
func findOllama(root string) (bin, why string) {
	if b := os.Getenv("PITWALL_OLLAMA_BIN"); b != "" {
		if _, err := exec.LookPath(b); err != nil {
			return "", fmt.Sprintf("PITWALL_OLLAMA_BIN=%s: %v", b, err)
		}
		return b, ""
	}
	// A cold build takes minutes; leave the tests their time within go test's -timeout.
	budget := 30 * time.Minute
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, ok := f.Value.(flag.Getter).Get().(time.Duration); ok && d > 0 {
			budget = max(d-4*time.Minute, time.Minute)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	script := filepath.Join(root, "scripts", "install-ollama.sh")
	cmd := exec.CommandContext(ctx, "bash", script)
	// The script's go build runs in its process group: stop all of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(&stderr, prefixWriter(os.Stderr, "install-ollama| "))
	fmt.Fprintf(os.Stderr, "e2e/ollama: PITWALL_E2E=1: %s builds Ollama if its cache lacks it (about 7 minutes cold on two cores, seconds warm; at most %s here)\n", script, budget)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Sprintf("%s did not finish within %s (go test -timeout less 4m); run it once by hand, or pass -timeout 30m", script, budget)
		}
		return "", fmt.Sprintf("%s failed (%v): %s", script, err, lastLines(stderr.String(), 3))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	bin = strings.TrimSpace(lines[len(lines)-1])
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Sprintf("%s printed %q, which is not a file", script, bin)
	}
	fmt.Fprintf(os.Stderr, "e2e/ollama: install-ollama.sh took %s\n", time.Since(start).Round(time.Millisecond))
	return bin, ""
}

type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func prefixWriter(w io.Writer, prefix string) io.Writer { return &lineWriter{w: w, prefix: prefix} }

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

func dumpLogTail(w io.Writer, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	fmt.Fprintf(w, "--- last %d lines of %s ---\n%s\n---\n", len(lines), path, strings.Join(lines, "\n"))
}

// ollamaServer is one `ollama serve` on a loopback port, in its own process
// group (its model runners are its children, so they are in it too).
type ollamaServer struct {
	bin       string
	host      string // 127.0.0.1:PORT
	modelsDir string
	home      string
	logPath   string

	mu     sync.Mutex
	cmd    *exec.Cmd
	pgid   int
	exited chan struct{}
	pgids  []int // every process group started, to check for leftovers
	// release stands down the watchdog of the running group (internal/reap).
	release func()
}

func newOllamaServer(bin, dir string) (*ollamaServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &ollamaServer{
		bin:       bin,
		host:      fmt.Sprintf("127.0.0.1:%d", port),
		modelsDir: filepath.Join(dir, "ollama-models"),
		home:      filepath.Join(dir, "ollama-home"),
		logPath:   filepath.Join(dir, "ollama.log"),
	}
	for _, d := range []string{s.modelsDir, s.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// env is the environment of every ollama process: the caller's without any
// OLLAMA_* variable, then the suite's.
func (s *ollamaServer) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OLLAMA_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+s.home,
		"OLLAMA_HOST="+s.host,
		"OLLAMA_MODELS="+s.modelsDir,
		"OLLAMA_MAX_LOADED_MODELS=1",
		"OLLAMA_NUM_PARALLEL=2",
		"OLLAMA_KEEP_ALIVE=10m",
		"OLLAMA_NOPRUNE=1",
	)
}

// baseURL is the server's root, without /v1.
func (s *ollamaServer) baseURL() string { return "http://" + s.host }

// start starts `ollama serve`, appending to the log, and waits until it answers.
func (s *ollamaServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("ollama serve is already running")
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== e2e: ollama serve on %s at %s ===\n", s.host, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env()
	cmd.Dir = s.home
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s serve: %w", s.bin, err)
	}
	s.cmd, s.pgid, s.exited = cmd, cmd.Process.Pid, make(chan struct{})
	s.pgids = append(s.pgids, s.pgid)
	// Its runners are in its group: the watchdog kills them all if this
	// binary dies before stop.
	if s.release, err = reap.Group(s.pgid); err != nil {
		syscall.Kill(-s.pgid, syscall.SIGKILL)
		return err
	}
	exited := s.exited
	go func() {
		cmd.Wait()
		logf.Close()
		close(exited)
	}()

	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("ollama serve exited at once (see %s)", s.logPath)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var v struct {
			Version string `json:"version"`
		}
		err := getJSON(ctx, s.baseURL()+"/api/version", &v)
		cancel()
		if err == nil && v.Version != "" {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("ollama serve did not answer on %s within 60s", s.host)
}

// signal sends sig to the server's whole process group and waits up to
// grace for the server to exit and the group to empty.
func (s *ollamaServer) signal(sig syscall.Signal, grace time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return true
	}
	syscall.Kill(-s.pgid, sig)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			if !groupAlive(s.pgid) {
				s.cmd = nil
				s.release()
				return true
			}
		default:
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// kill kills the server and its runners at once (SIGKILL to the group).
func (s *ollamaServer) kill() {
	s.signal(syscall.SIGKILL, 10*time.Second)
}

// stop asks the server to shut down (SIGTERM), then kills what is left.
func (s *ollamaServer) stop() {
	if !s.signal(syscall.SIGTERM, 10*time.Second) {
		s.kill()
	}
}

// leftovers names the process groups the suite started that still have processes.
func (s *ollamaServer) leftovers() string {
	var out []string
	for _, g := range s.pgids {
		if groupAlive(g) {
			out = append(out, fmt.Sprintf("process group %d", g))
		}
	}
	return strings.Join(out, ", ")
}

func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}

// ollamaCmd runs the ollama CLI against the server.
func ollamaCmd(ctx context.Context, bin, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = srv.env()
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

const plainTemplate = `{{- if .System }}system: {{ .System }}
{{ end }}{{- range .Messages }}{{ .Role }}: {{ .Content }}
{{ end }}assistant: `

// toolsTemplate uses .Tools and .ToolCalls, as real tool-calling templates do.
const toolsTemplate = `{{- if .System }}system: {{ .System }}
{{ end }}{{- if .Tools }}tools:{{ range .Tools }} {{ .Function.Name }}{{ end }}
{{ end }}{{- range .Messages }}{{ .Role }}: {{ .Content }}{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}{{ end }}
{{ end }}assistant: `

// createTinyModels writes one GGUF per tiny model and registers it with `ollama create`.
func createTinyModels(bin string) error {
	dir := filepath.Join(workDir, "gguf")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, m := range tinyModels {
		base := strings.TrimSuffix(m.name, ":latest")
		gguf := filepath.Join(dir, base+".gguf")
		if err := writeTinyGGUF(gguf, defaultTinyModel(base, m.seed)); err != nil {
			return fmt.Errorf("write %s: %w", gguf, err)
		}
		tmpl := plainTemplate
		if m.tools {
			tmpl = toolsTemplate
		}
		modelfile := fmt.Sprintf("FROM ./%s.gguf\nTEMPLATE \"\"\"%s\"\"\"\nPARAMETER num_ctx 256\n", base, tmpl)
		mf := filepath.Join(dir, base+".Modelfile")
		if err := os.WriteFile(mf, []byte(modelfile), 0o644); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := ollamaCmd(ctx, bin, dir, "create", m.name, "-f", mf)
		cancel()
		if err != nil {
			return fmt.Errorf("ollama create %s: %v\n%s", m.name, err, out)
		}
	}
	return nil
}

// --- Ollama's native API ------------------------------------------------------------------

var httpClient = &http.Client{Timeout: 30 * time.Second}

func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

// postJSON posts v and returns the status and body.
func postJSON(ctx context.Context, url string, v any) (int, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

type psModel struct {
	Name      string    `json:"name"`
	Model     string    `json:"model"`
	ExpiresAt time.Time `json:"expires_at"`
}

// resident lists the models Ollama has loaded (GET /api/ps).
func resident(ctx context.Context) ([]string, error) {
	var ps struct {
		Models []psModel `json:"models"`
	}
	if err := getJSON(ctx, srv.baseURL()+"/api/ps", &ps); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ps.Models {
		out = append(out, m.Name)
	}
	return out, nil
}

// unloadAll asks Ollama to unload every resident model (keep_alive 0) and
// waits until /api/ps is empty.
func unloadAll(t *testing.T) {
	t.Helper()
	ctx, cancel := stepContext(t, 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		res, err := resident(ctx)
		if err != nil {
			t.Fatalf("GET /api/ps: %v", err)
		}
		if len(res) == 0 {
			return
		}
		for _, m := range res {
			postJSON(ctx, srv.baseURL()+"/api/generate", map[string]any{"model": m, "keep_alive": 0})
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("models still resident 30s after asking Ollama to unload them")
}

// scanLines calls f for each line of r until r ends.
func scanLines(r io.Reader, f func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		f(sc.Text())
	}
}
