package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"pitwall/internal/reap"
)

// Password is the superuser's password: the server asks for it over TCP
// (scram-sha-256), so that tests of a wrong password and of masking have
// a real one.
const Password = "pitwall-test-secret"

// User is the cluster's superuser.
const User = "pitwall"

// ErrNoServer: the binaries are missing (or the cluster would not start);
// its text says which and how to get them.
var ErrNoServer = errors.New("no PostgreSQL server binaries")

// Cluster is a running throwaway server.
type Cluster struct {
	dir  string
	bin  string
	port int
	cmd  *exec.Cmd
	log  string
	cred *syscall.Credential
	n    atomic.Int64
	// release stands down the watchdog that kills the server and removes
	// its folder if this test binary dies before Stop (internal/reap).
	release func()

	mu    sync.Mutex
	admin *sql.DB
}

// Bin finds the server's binaries: PITWALL_PG_BIN, the newest
// /usr/lib/postgresql/*/bin, or initdb on PATH.
func Bin() (string, error) {
	if d := os.Getenv("PITWALL_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("%w: no initdb in PITWALL_PG_BIN, /usr/lib/postgresql/*/bin or PATH (scripts/install-postgres.sh installs Debian's postgresql)", ErrNoServer)
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start initialises and starts a cluster in a new temporary folder.
func Start() (*Cluster, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			return nil, fmt.Errorf("%w: running as root, and no user nobody to run initdb as: %v", ErrNoServer, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if c.dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, err
	}
	if c.cred != nil {
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			c.Stop()
			return nil, err
		}
	}
	pw := filepath.Join(c.dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o600); err != nil {
		c.Stop()
		return nil, err
	}
	if c.cred != nil {
		_ = os.Chown(pw, int(c.cred.Uid), int(c.cred.Gid))
	}
	data := filepath.Join(c.dir, "data")
	if out, err := c.command("initdb", "-D", data, "-U", User, "--pwfile", pw, "-E", "UTF8", "--locale=C",
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("%w: initdb: %v: %s", ErrNoServer, err, out)
	}
	if c.port, err = freePort(); err != nil {
		c.Stop()
		return nil, err
	}
	c.log = filepath.Join(c.dir, "server.log")
	if err := c.serve(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// serve starts the server on c's folder and port and waits until it
// takes connections.
func (c *Cluster) serve() error {
	logf, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	// fsync off: a commit is written, not synced, as SQLite's WAL with
	// synchronous=NORMAL does; the tests and the benchmark compare alike.
	c.cmd = c.command("postgres", "-D", filepath.Join(c.dir, "data"), "-p", strconv.Itoa(c.port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	c.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := c.cmd.Start(); err != nil {
		c.cmd = nil
		return fmt.Errorf("%w: postgres: %v", ErrNoServer, err)
	}
	if c.release, err = reap.Group(c.cmd.Process.Pid, c.dir); err != nil {
		return err
	}
	return c.waitUp(30 * time.Second)
}

// Restart stops the server (fast shutdown: every session is ended, as by
// `pg_ctl restart`) and starts it again on the same port, after down (a
// server away for a while). Its databases are kept.
func (c *Cluster) Restart(down time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.halt()
	time.Sleep(down)
	return c.serve()
}

// halt stops the server and its watchdog, leaving its folder.
func (c *Cluster) halt() {
	if c.release != nil {
		c.release()
		c.release = nil
	}
	if c.admin != nil {
		c.admin.Close()
		c.admin = nil
	}
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = c.cmd.Process.Kill()
			<-done
		}
		c.cmd = nil
	}
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Setpgid: true}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *Cluster) waitUp(limit time.Duration) error {
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			c.admin = db
			return nil
		}
		if time.Now().After(deadline) {
			db.Close()
			log, _ := os.ReadFile(c.log)
			return fmt.Errorf("%w: the server did not come up in %s: %v\n%s", ErrNoServer, limit, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Port is the server's TCP port on 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// URL is the superuser's URL of database name, over TCP, with its password.
func (c *Cluster) URL(name string) string {
	return c.URLAs(User, Password, name)
}

// URLAs is the URL of database name as user with password.
func (c *Cluster) URLAs(user, password, name string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", user, password, c.port, name)
}

// Exec runs statements as the superuser, on database postgres.
func (c *Cluster) Exec(q string) error {
	_, err := c.admin.Exec(q)
	return err
}

// ExecIn runs statements as the superuser on database name.
func (c *Cluster) ExecIn(name, q string) error {
	db, err := sql.Open("pgx", c.URL(name))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(q)
	return err
}

// NewDatabase creates an empty database for one test and returns its URL.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%s", c.n.Add(1), sanitize(tb.Name()))
	if err := c.Exec(`CREATE DATABASE "` + name + `"`); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return c.URL(name)
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}

// Stop stops the server (fast shutdown) and removes its folder.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.halt()
	if c.dir != "" {
		os.RemoveAll(c.dir)
		c.dir = ""
	}
}

// Main runs a package's tests on each backend: run with "" (SQLite, or
// whatever the package's default is), then, if a cluster starts, with it.
// Without the binaries it says why and, where CI=true, fails. It returns
// the exit code for os.Exit.
func Main(m *testing.M, use func(*Cluster)) int {
	use(nil)
	code := m.Run()
	if code != 0 {
		return code
	}
	c, err := Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: the PostgreSQL cases are skipped: %v\n", err)
		if os.Getenv("CI") == "true" {
			return 1
		}
		return 0
	}
	defer c.Stop()
	fmt.Fprintf(os.Stderr, "pgtest: the same tests on PostgreSQL (127.0.0.1:%d)\n", c.port)
	use(c)
	return m.Run()
}
