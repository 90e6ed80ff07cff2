// Package chtest starts real clickhouse-server processes for tests: one
// server, or a cluster of single-replica shards on one machine. Servers
// listen on loopback ports chosen at start, keep their data in a temporary
// directory, and are stopped by their own PID.
//
// When no ClickHouse binary is installed the tests that need one skip with
// a message naming the Debian package and the script that installs it.
package chtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Server is one running clickhouse-server.
type Server struct {
	// Addr is the native-protocol address, host:port on loopback.
	Addr string
	dir  string
	cmd  *exec.Cmd
	exit chan struct{}
}

// URL returns the Strata events URL of database db on the server, with
// extra query parameters (e.g. "cluster=strata") if any.
func (s *Server) URL(db, query string) string {
	u := "clickhouse://" + s.Addr + "/" + db
	if query != "" {
		u += "?" + query
	}
	return u
}

// Stop terminates the server by its PID and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exit:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.exit
	}
	os.RemoveAll(s.dir)
}

// binary returns how to run the server: Debian's clickhouse-server, or the
// single `clickhouse` binary of current releases.
func binary() ([]string, bool) {
	for _, p := range []string{"clickhouse-server", "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"} {
		if path, err := exec.LookPath(p); err == nil {
			return []string{path}, true
		}
	}
	if path, err := exec.LookPath("clickhouse"); err == nil {
		return []string{path, "server"}, true
	}
	return nil, false
}

// Skip skips t unless a ClickHouse server binary is installed.
func Skip(t testing.TB) {
	t.Helper()
	if _, ok := binary(); !ok {
		t.Skip("ClickHouse is not installed: install Debian's clickhouse-server package (scripts/install-test-deps.sh does, as `make test` runs it)")
	}
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
	started    []*Server
	startedMu  sync.Mutex
)

// Shared returns one server for the whole test binary, starting it on first
// use. StopAll (called from TestMain) stops it.
func Shared(t testing.TB) *Server {
	t.Helper()
	Skip(t)
	sharedOnce.Do(func() {
		var servers []*Server
		servers, sharedErr = start(1)
		if sharedErr == nil {
			shared = servers[0]
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// Cluster starts shards servers, each one shard of the cluster named
// "strata" in every server's configuration, and stops them when t ends.
func Cluster(t testing.TB, shards int) []*Server {
	t.Helper()
	Skip(t)
	servers, err := start(shards)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range servers {
			s.Stop()
		}
	})
	return servers
}

// StartServers starts n servers (the shards of cluster "strata") for a
// program such as the benchmark; the caller stops them with Stop.
func StartServers(n int) ([]*Server, error) {
	if _, ok := binary(); !ok {
		return nil, fmt.Errorf("ClickHouse is not installed (Debian package clickhouse-server; scripts/install-test-deps.sh installs it)")
	}
	return start(n)
}

// StopAll stops every server still running; TestMain calls it after the
// tests so that no server outlives the test binary.
func StopAll() {
	startedMu.Lock()
	defer startedMu.Unlock()
	for _, s := range started {
		s.Stop()
	}
	started = nil
}

// start launches n servers that know each other as the shards of cluster
// "strata", and waits until each answers a ping.
func start(n int) ([]*Server, error) {
	bin, ok := binary()
	if !ok {
		return nil, fmt.Errorf("no clickhouse-server binary")
	}
	type ports struct{ tcp, http int }
	ps := make([]ports, n)
	for i := range ps {
		var err error
		if ps[i].tcp, err = freePort(); err != nil {
			return nil, err
		}
		if ps[i].http, err = freePort(); err != nil {
			return nil, err
		}
	}
	var shards strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&shards, "<shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>", p.tcp)
	}
	var servers []*Server
	for _, p := range ps {
		dir, err := os.MkdirTemp("", "strata-clickhouse-")
		if err != nil {
			return servers, err
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", p.tcp), dir: dir, exit: make(chan struct{})}
		if err := os.WriteFile(filepath.Join(dir, "config.xml"), []byte(fmt.Sprintf(configXML, dir, p.tcp, p.http, shards.String())), 0o600); err != nil {
			return servers, err
		}
		if err := os.WriteFile(filepath.Join(dir, "users.xml"), []byte(usersXML), 0o600); err != nil {
			return servers, err
		}
		args := append(bin[1:], "--config-file="+filepath.Join(dir, "config.xml"))
		s.cmd = exec.Command(bin[0], args...)
		s.cmd.Dir = dir
		log, err := os.Create(filepath.Join(dir, "stdout.log"))
		if err != nil {
			return servers, err
		}
		s.cmd.Stdout, s.cmd.Stderr = log, log
		if err := s.cmd.Start(); err != nil {
			return servers, fmt.Errorf("starting clickhouse-server: %w", err)
		}
		go func() { s.cmd.Wait(); log.Close(); close(s.exit) }()
		startedMu.Lock()
		started = append(started, s)
		startedMu.Unlock()
		servers = append(servers, s)
	}
	for _, s := range servers {
		if err := s.waitReady(60 * time.Second); err != nil {
			return servers, err
		}
	}
	return servers, nil
}

func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-s.exit:
			out, _ := os.ReadFile(filepath.Join(s.dir, "err.log"))
			return fmt.Errorf("clickhouse-server on %s exited at start: %s", s.Addr, out)
		default:
		}
		conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{s.Addr}, DialTimeout: time.Second})
		if err == nil {
			err = conn.Ping(context.Background())
			conn.Close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("clickhouse-server on %s not ready after %s: %v", s.Addr, limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// configXML is a minimal server configuration: loopback only, data in the
// temporary directory, and the cluster "strata" of every started shard.
// The root element is <yandex>, which current releases still accept.
const configXML = `<?xml version="1.0"?>
<yandex>
    <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/err.log</errorlog><console>0</console></logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>%[2]d</tcp_port>
    <http_port>%[3]d</http_port>
    <path>%[1]s/data/</path>
    <tmp_path>%[1]s/data/tmp/</tmp_path>
    <user_files_path>%[1]s/data/user_files/</user_files_path>
    <format_schema_path>%[1]s/data/format_schemas/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <!-- Not UTC on purpose: Strata must not depend on the server time zone. -->
    <timezone>Asia/Kolkata</timezone>
    <mark_cache_size>268435456</mark_cache_size>
    <max_concurrent_queries>100</max_concurrent_queries>
    <remote_servers><strata>%[4]s</strata></remote_servers>
</yandex>
`

const usersXML = `<?xml version="1.0"?>
<yandex>
    <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
    <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
    <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
