// Package pgtest starts real PostgreSQL servers for tests, so that the
// PostgreSQL store is tested against the database it will run on rather
// than a fake.
//
// A server is a throwaway cluster: initdb into a new temporary directory,
// postgres started as a child process listening on 127.0.0.1 on a free port
// (its unix socket inside the same directory, never the system's), and a
// password-protected superuser. It is tuned for tests (no fsync, no full-page
// writes) and stopped by its own PID, then its directory is removed. The
// Debian cluster service, if one exists, is never used.
//
// A package whose TestMain calls Main shares one server among all its tests
// and Start only creates a fresh database on it (tens of milliseconds);
// without Main, every Start runs a server of its own, stopped when the test
// ends. Either way each Start returns the URL of a new, empty database.
//
// The binaries are looked up under /usr/lib/postgresql/*/bin (Debian and
// Ubuntu), newest version first, then on PATH. When none is found Start
// skips the test, naming the package to install. PostgreSQL refuses to run
// as root, so under root the server runs as the postgres system user that
// the package creates.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// installHint tells the reader of a skipped test how to get PostgreSQL.
const installHint = "install Debian's postgresql package (scripts/install-test-deps.sh does, as root or with sudo)"

// startTimeout bounds initdb plus the server's start on a loaded machine.
const startTimeout = 2 * time.Minute

var (
	mu         sync.Mutex
	mainActive bool    // Main is running the tests
	shared     *server // the server shared by the tests under Main
	sharedErr  error   // why the shared server could not start
)

// Main runs a package's tests with one PostgreSQL server for all of them,
// started by the first Start and stopped after the last test. Call it from
// TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	mu.Lock()
	mainActive = true
	mu.Unlock()
	code := m.Run()
	mu.Lock()
	srv := shared
	shared, mainActive = nil, false
	mu.Unlock()
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// Start returns the URL of a new, empty database on a running PostgreSQL
// server, connecting as a superuser. It skips the test when PostgreSQL is
// not installed and fails it when the server cannot start.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := findBinaries()
	if err != nil {
		t.Skipf("pgtest: %v; %s", err, installHint)
	}
	owner, err := serverUser()
	if err != nil {
		t.Skipf("pgtest: %v; %s", err, installHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	mu.Lock()
	var srv *server
	if mainActive {
		if shared == nil && sharedErr == nil {
			shared, sharedErr = startServer(ctx, bin, owner)
		}
		srv, err = shared, sharedErr
	} else {
		srv, err = startServer(ctx, bin, owner)
		if err == nil {
			t.Cleanup(func() {
				if err := srv.stop(); err != nil {
					t.Error(err)
				}
			})
		}
	}
	mu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if testing.Verbose() && srv.reported.CompareAndSwap(false, true) {
		t.Logf("pgtest: PostgreSQL %s ready on %s in %v", srv.version, srv.addr, srv.startup.Round(time.Millisecond))
	}
	dbURL, err := srv.createDB(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dbURL
}

// Run starts a PostgreSQL server of its own outside a test, for the
// benchmarks (cmd/strata-bench runs a node on ClickHouse with its metadata
// in PostgreSQL, as a cluster does), and returns the URL of a new, empty
// database on it and the function that stops it by its PID and removes
// its directory.
func Run(ctx context.Context) (string, func() error, error) {
	bin, err := findBinaries()
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w; %s", err, installHint)
	}
	owner, err := serverUser()
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w; %s", err, installHint)
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	srv, err := startServer(ctx, bin, owner)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	dbURL, err := srv.createDB(ctx)
	if err != nil {
		srv.stop()
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	return dbURL, srv.stop, nil
}

// findBinaries returns the directory holding initdb and postgres.
func findBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest major version first: compare "9.6" < "15" numerically.
	version := func(dir string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return int(version(b)*100 - version(a)*100) })
	if p, err := exec.LookPath("initdb"); err == nil {
		// Follow a symlink such as /usr/local/bin/initdb to the
		// directory that also holds postgres.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, dir := range dirs {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found under /usr/lib/postgresql/*/bin or on PATH")
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// account is the system user the server runs as when the tests run as root.
type account struct {
	name     string
	uid, gid uint32
}

// serverUser returns nil when the server can run as the current user, and
// the postgres system user when the tests run as root.
func serverUser() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres system user, which does not exist (%w)", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("reading the postgres user's ids: %w", err)
	}
	return &account{name: u.Username, uid: uint32(uid), gid: uint32(gid)}, nil
}

// server is one running cluster.
type server struct {
	dir      string // temporary directory: data/, the socket, postgres.log
	version  string
	addr     string // 127.0.0.1:port
	password string
	startup  time.Duration

	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has been waited for

	reported atomic.Bool // whether a test has logged the start-up time

	adminMu sync.Mutex
	admin   *pgx.Conn // to the postgres database, for CREATE DATABASE
	dbs     int       // databases created so far, to name the next
}

// startServer creates a cluster in a new temporary directory and starts it.
func startServer(ctx context.Context, bin string, owner *account) (srv *server, err error) {
	began := time.Now()
	// Under root the directory must be reachable by the postgres user, and
	// the socket path must stay under the kernel's 107-byte limit: /tmp
	// satisfies both, whatever TMPDIR says.
	base := ""
	if owner != nil || len(os.TempDir()) > 60 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "strata-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("creating a directory for PostgreSQL: %w", err)
	}
	srv = &server{dir: dir}
	defer func() {
		if err != nil {
			srv.stop()
		}
	}()
	if owner != nil {
		if err := os.Chown(dir, int(owner.uid), int(owner.gid)); err != nil {
			return nil, fmt.Errorf("handing %s to the %s user: %w", dir, owner.name, err)
		}
	}

	secret := make([]byte, 16)
	rand.Read(secret)
	srv.password = hex.EncodeToString(secret)
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(srv.password+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing the password file: %w", err)
	}
	if owner != nil {
		if err := os.Chown(pwfile, int(owner.uid), int(owner.gid)); err != nil {
			return nil, fmt.Errorf("handing the password file to %s: %w", owner.name, err)
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"--pgdata", filepath.Join(dir, "data"), "--username", "postgres", "--pwfile", pwfile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C", "--no-sync")
	if err := prepare(initdb, dir, owner); err != nil {
		return nil, err
	}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	os.Remove(pwfile)

	// The free port is found by binding and releasing it, so another
	// process may take it first; postgres then exits, and we try another.
	for attempt := 1; ; attempt++ {
		err := srv.run(ctx, bin, owner)
		if err == nil {
			break
		}
		if attempt == 3 || !errors.Is(err, errPortTaken) {
			return nil, err
		}
	}
	srv.startup = time.Since(began)
	return srv, nil
}

// errPortTaken is why postgres exited when its port was no longer free.
var errPortTaken = errors.New("port taken")

// run starts postgres on a free port and waits until it accepts a login.
func (s *server) run(ctx context.Context, bin string, owner *account) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("finding a free port: %w", err)
	}
	s.addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(s.addr)

	logPath := filepath.Join(s.dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("creating the server log: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	// Not CommandContext: the server must outlive the start-up context.
	cmd := exec.Command(filepath.Join(bin, "postgres"),
		"-D", filepath.Join(s.dir, "data"), "-h", "127.0.0.1", "-p", port, "-k", s.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := prepare(cmd, s.dir, owner); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		close(s.exited)
	}()

	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(attempt, s.url("postgres"))
		cancel()
		if err == nil {
			s.admin = conn
			return conn.QueryRow(ctx, `SELECT current_setting('server_version')`).Scan(&s.version)
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(logPath)
			s.cmd = nil
			if bytes.Contains(log, []byte("could not bind")) || bytes.Contains(log, []byte("already in use")) {
				os.Truncate(logPath, 0)
				return errPortTaken
			}
			return fmt.Errorf("postgres exited while starting (%v):\n%s", cmd.ProcessState, tail(log))
		case <-ctx.Done():
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres did not accept connections within %v: %w\n%s", startTimeout, err, tail(log))
		case <-tick.C:
		}
	}
}

// prepare sets what initdb and postgres share: the working directory, a C
// locale whatever the caller's environment, and, under root, the user.
func prepare(cmd *exec.Cmd, dir string, owner *account) error {
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	return setProcAttr(cmd, owner)
}

// url is the address of a database, for pgx and the store under test.
func (s *server) url(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword("postgres", s.password),
		Host:     s.addr,
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// createDB creates a new database and returns its URL.
func (s *server) createDB(ctx context.Context) (string, error) {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	s.dbs++
	name := fmt.Sprintf("strata_test_%d", s.dbs)
	// A name is an identifier, which cannot be a parameter; this one is
	// ours, and quoted anyway.
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return s.url(name), nil
}

// stop shuts the server down by its PID and removes its directory. It is
// safe on a server that never started.
func (s *server) stop() error {
	var errs []error
	if s.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.admin.Close(ctx)
		cancel()
	}
	if s.cmd != nil {
		// SIGINT is PostgreSQL's fast shutdown: it disconnects clients,
		// which a test may have left open, and exits cleanly.
		if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
			errs = append(errs, fmt.Errorf("stopping postgres (pid %d): %w", s.cmd.Process.Pid, err))
		}
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
			errs = append(errs, fmt.Errorf("postgres (pid %d) ignored a fast shutdown for 30s and was killed", s.cmd.Process.Pid))
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, fmt.Errorf("removing %s: %w", s.dir, err))
	}
	return errors.Join(errs...)
}

// tail returns the end of a server log, enough to show why it failed.
func tail(log []byte) string {
	const n = 4000
	if len(log) > n {
		log = log[len(log)-n:]
	}
	return strings.TrimSpace(string(log))
}
