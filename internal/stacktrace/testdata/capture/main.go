// Command capture records real error stacks for the stacktrace package's
// tests: it serves a test page on 127.0.0.1 whose script (bugs.js) throws
// one error per bug, opens it in headless Chromium, headless Firefox and
// WebKitGTK's MiniBrowser (JavaScriptCore, Safari's engine, under Xvfb),
// runs the same script under Node, and writes each error's stack to
// testdata/<engine>-<build>-<bug>.txt, with testdata/captured.json saying
// which browser wrote which file and the error's type and message.
//
// Each browser loads the page twice: build a is bugs.js as it is, build b
// is bugs.js moved down by a comment block, as a rebuild moves lines.
//
// It is run by hand, from the repository's root, never by the tests:
//
//	go run ./internal/stacktrace/testdata/capture
//
// Engines that are not installed are skipped (with -engines naming fewer,
// only those run); their earlier files are kept. Every browser is started
// by this program in its own process group and stopped by that group's id
// once its stacks have arrived, or after -timeout.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

//go:embed bugs.js
var bugsJS string

//go:embed sdk.min.js
var sdkJS string

//go:embed module.mjs
var moduleJS string

//go:embed node.js
var nodeJS string

// scriptBugs are the keys of bugs.js's bugs object, in its order: what
// every engine runs.
var scriptBugs = []string{"named", "method", "object", "timeout", "async", "eval", "json", "map", "constructor", "sdk", "tail"}

// pageBugs are what the browsers run: bugs.js's and module.mjs's.
var pageBugs = append(append([]string(nil), scriptBugs...), "module")

// firefoxAsyncPrefs make Firefox record async stacks outside the
// debugger, as it does with its developer tools open: "async*" and
// "setTimeout handler*" frames (by default Firefox records them only for
// a page being debugged).
const firefoxAsyncPrefs = `user_pref("javascript.options.asyncstack", true);
user_pref("javascript.options.asyncstack_capture_debuggee_only", false);
`

// shiftBlock is what build b puts before bugs.js: its lines move every
// line of build a down by len(lines).
const shiftBlock = `// Build b: bugs.js moved down by this comment block, as a rebuild moves
// every line when a header, an import or a helper is added above them.
// The fingerprint of each bug must not change: it leaves lines and
// columns out.
//
// (The capture program in internal/stacktrace/testdata/capture adds this.)
`

// shift is how many lines build b moves build a's lines down by.
var shift = strings.Count(shiftBlock, "\n")

// xDisplay is the X display of the Xvfb that MiniBrowser runs on.
var xDisplay string

// MiniBrowser is WebKitGTK's test browser, in Debian's libwebkit2gtk-4.1-0.
const miniBrowser = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"

// report is what the page (or node.js) sends for one bug.
type report struct {
	Engine    string `json:"engine"`
	Build     string `json:"build"`
	Bug       string `json:"bug"`
	Name      string `json:"name"`
	Message   string `json:"message"`
	Stack     string `json:"stack"`
	UserAgent string `json:"userAgent"`
}

// Stack is one entry of captured.json: a file and what threw it.
type Stack struct {
	File    string `json:"file"`
	Engine  string `json:"engine"`
	Build   string `json:"build"`
	Bug     string `json:"bug"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Manifest is captured.json.
type Manifest struct {
	// Shift is how many lines build b moved build a's lines down by.
	Shift int `json:"shift"`
	// Engines maps each engine to the browser (or Node) that wrote its
	// stacks: version and user agent.
	Engines map[string]string `json:"engines"`
	Stacks  []Stack           `json:"stacks"`
}

func main() {
	out := flag.String("out", "internal/stacktrace/testdata", "the directory the stacks are written to")
	addr := flag.String("addr", "127.0.0.1:8765", "the address the test page is served on (loopback only)")
	engines := flag.String("engines", "chromium,firefox,firefox-asyncstack,webkit,node", "the engines to capture, comma-separated")
	timeout := flag.Duration("timeout", 60*time.Second, "how long one browser has to send its stacks")
	flag.Parse()
	if err := capture(*out, *addr, strings.Split(*engines, ","), *timeout); err != nil {
		log.Fatal(err)
	}
}

// capture serves the page, runs every engine over both builds and writes
// the files and the manifest.
func capture(out, addr string, engines []string, timeout time.Duration) error {
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory: run from the repository's root or pass -out", out)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-addr %q: the page is served on a loopback address only", addr)
	}
	srv := newServer()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	for _, engine := range engines {
		if engine != "webkit" {
			continue
		}
		if _, err := os.Stat(miniBrowser); err != nil {
			break // skipped below
		}
		// One X server for every MiniBrowser run: a new one per run
		// was not always reachable by the next MiniBrowser.
		xvfb, display, err := startXvfb()
		if err != nil {
			return err
		}
		defer stop(xvfb)
		xDisplay = display
	}

	m := readManifest(filepath.Join(out, "captured.json"))
	m.Shift = shift
	for _, engine := range engines {
		var reports []report
		var version string
		for _, build := range []string{"a", "b"} {
			url := fmt.Sprintf("http://%s/?engine=%s&build=%s", addr, engine, build)
			var got []report
			var err error
			switch engine {
			case "node":
				got, version, err = runNode(build, timeout)
			default:
				got, err = runBrowser(srv, engine, build, url, timeout)
			}
			if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
				log.Printf("%s: not installed, skipped (%v)", engine, err)
				break
			}
			if err != nil {
				return fmt.Errorf("%s, build %s: %w", engine, build, err)
			}
			reports = append(reports, got...)
		}
		if len(reports) == 0 {
			continue
		}
		if engine != "node" {
			version = browserVersion(engine) + "; " + reports[0].UserAgent
		}
		m.Engines[engine] = version
		m.Stacks = dropEngine(m.Stacks, engine)
		for _, r := range reports {
			file := fmt.Sprintf("%s-%s-%s.txt", engine, r.Build, r.Bug)
			if err := os.WriteFile(filepath.Join(out, file), []byte(r.Stack), 0o644); err != nil {
				return err
			}
			m.Stacks = append(m.Stacks, Stack{File: file, Engine: engine, Build: r.Build, Bug: r.Bug, Type: r.Name, Message: r.Message})
		}
		log.Printf("%s: %d stacks (%s)", engine, len(reports), version)
	}
	sort.Slice(m.Stacks, func(i, j int) bool { return m.Stacks[i].File < m.Stacks[j].File })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "captured.json"), append(b, '\n'), 0o644)
}

// readManifest reads the manifest an earlier capture wrote, so that the
// engines not captured this time keep their entries.
func readManifest(path string) Manifest {
	m := Manifest{Engines: map[string]string{}}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &m); err != nil || m.Engines == nil {
			m = Manifest{Engines: map[string]string{}}
		}
	}
	return m
}

// dropEngine removes an engine's entries, which a new capture replaces.
func dropEngine(stacks []Stack, engine string) []Stack {
	var kept []Stack
	for _, s := range stacks {
		if s.Engine != engine {
			kept = append(kept, s)
		}
	}
	return kept
}

// server serves the page and its scripts and collects the reports.
type server struct {
	mu      sync.Mutex
	reports map[string][]report // by engine and build
	arrived chan struct{}       // signalled on every report
}

func newServer() *server {
	return &server{reports: map[string][]report{}, arrived: make(chan struct{}, 64)}
}

// page is the test page: report posts each bug's error back to the server.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<meta charset="utf-8">
<title>Strata stack capture</title>
<script>
const params = new URLSearchParams(location.search);
function report(bug, e) {
  fetch("/report", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      engine: params.get("engine"),
      build: params.get("build"),
      bug: bug,
      name: e ? String(e.name) : "",
      message: e ? String(e.message) : "",
      stack: e ? String(e.stack) : "",
      userAgent: navigator.userAgent,
    }),
  });
}
</script>
<script src="/sdk/v1/sdk.min.js"></script>
<script src="/assets/bugs.js?build={{.}}"></script>
<script type="module" src="/assets/module.mjs?build={{.}}"></script>
<p>Capturing stacks (build {{.}}).</p>
`))

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/":
		build := r.URL.Query().Get("build")
		if build != "a" && build != "b" {
			http.Error(w, "build a or b", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page.Execute(w, build)
	case r.Method == http.MethodGet && r.URL.Path == "/assets/bugs.js":
		w.Header().Set("Content-Type", "text/javascript")
		if r.URL.Query().Get("build") == "b" {
			fmt.Fprint(w, shiftBlock)
		}
		fmt.Fprint(w, bugsJS)
	case r.Method == http.MethodGet && r.URL.Path == "/assets/module.mjs":
		w.Header().Set("Content-Type", "text/javascript")
		if r.URL.Query().Get("build") == "b" {
			fmt.Fprint(w, shiftBlock)
		}
		fmt.Fprint(w, moduleJS)
	case r.Method == http.MethodGet && r.URL.Path == "/sdk/v1/sdk.min.js":
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, sdkJS)
	case r.Method == http.MethodPost && r.URL.Path == "/report":
		var rep report
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&rep); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		key := rep.Engine + "/" + rep.Build
		s.reports[key] = append(s.reports[key], rep)
		s.mu.Unlock()
		select {
		case s.arrived <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// reset forgets the reports of one engine and build, before a new try.
func (s *server) reset(engine, build string) {
	s.mu.Lock()
	delete(s.reports, engine+"/"+build)
	s.mu.Unlock()
}

// wait returns the reports of one engine and build once every bug has
// sent one, or fails after timeout.
func (s *server) wait(engine, build string, bugs []string, timeout time.Duration) ([]report, error) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got := s.reports[engine+"/"+build]
		s.mu.Unlock()
		if len(got) >= len(bugs) {
			return byBug(got, bugs)
		}
		select {
		case <-s.arrived:
		case <-deadline:
			return nil, fmt.Errorf("%d of %d stacks arrived in %v", len(got), len(bugs), timeout)
		}
	}
}

// byBug checks that each bug reported once, with an error, and orders the
// reports as bugs.
func byBug(got []report, bugs []string) ([]report, error) {
	by := map[string]report{}
	for _, r := range got {
		if r.Stack == "" {
			return nil, fmt.Errorf("bug %s threw nothing", r.Bug)
		}
		by[r.Bug] = r
	}
	var ordered []report
	for _, name := range bugs {
		r, ok := by[name]
		if !ok {
			return nil, fmt.Errorf("bug %s did not report", name)
		}
		ordered = append(ordered, r)
	}
	return ordered, nil
}

// runBrowser opens url in one engine's headless browser and waits for the
// page's reports. A browser that does not send them all is tried again,
// twice (MiniBrowser once failed to reach its display).
func runBrowser(s *server, engine, build, url string, timeout time.Duration) ([]report, error) {
	var err error
	for try := 1; try <= 3; try++ {
		var got []report
		s.reset(engine, build)
		got, err = openPage(s, engine, build, url, timeout)
		if err == nil || errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return got, err
		}
		log.Printf("%s, build %s, try %d: %v", engine, build, try, err)
	}
	return nil, err
}

// openPage is one try of runBrowser.
func openPage(s *server, engine, build, url string, timeout time.Duration) ([]report, error) {
	tmp, err := os.MkdirTemp("", "strata-capture-"+engine+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var browser *exec.Cmd
	env := append(os.Environ(), "HOME="+tmp, "XDG_CACHE_HOME="+tmp, "XDG_DATA_HOME="+tmp, "XDG_CONFIG_HOME="+tmp)
	switch engine {
	case "chromium":
		browser = exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu",
			"--no-first-run", "--user-data-dir="+tmp, url)
	case "firefox", "firefox-asyncstack":
		profile := filepath.Join(tmp, "profile")
		if err := os.Mkdir(profile, 0o700); err != nil {
			return nil, err
		}
		if engine == "firefox-asyncstack" {
			if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(firefoxAsyncPrefs), 0o600); err != nil {
				return nil, err
			}
		}
		browser = exec.Command("firefox-esr", "--headless", "--no-remote", "-profile", profile, url)
	case "webkit":
		if _, err := os.Stat(miniBrowser); err != nil {
			return nil, err
		}
		if xDisplay == "" {
			return nil, errors.New("no X display for MiniBrowser")
		}
		browser = exec.Command(miniBrowser, url)
		env = append(env, "DISPLAY="+xDisplay)
	default:
		return nil, fmt.Errorf("unknown engine %q", engine)
	}
	var stderr bytes.Buffer
	browser.Stderr = &stderr
	browser.Env = env
	browser.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := browser.Start(); err != nil {
		return nil, err
	}
	defer stop(browser)
	got, err := s.wait(engine, build, pageBugs, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w; the browser said: %s", err, tail(stderr.String()))
	}
	return got, nil
}

// startXvfb starts a virtual X server for MiniBrowser on a display it
// picks itself (-displayfd), and returns the display's name.
func startXvfb() (*exec.Cmd, string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, "", err
	}
	w.Close()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	n, err := r.Read(buf)
	if err != nil {
		stop(cmd)
		return nil, "", fmt.Errorf("Xvfb gave no display: %w", err)
	}
	num := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(num); err != nil {
		stop(cmd)
		return nil, "", fmt.Errorf("Xvfb gave display %q", num)
	}
	// The display number can come before the server answers on it.
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.Dial("unix", "/tmp/.X11-unix/X"+num)
		if err == nil {
			c.Close()
			break
		}
		if time.Since(start) > 10*time.Second {
			stop(cmd)
			return nil, "", fmt.Errorf("Xvfb display :%s does not answer: %w", num, err)
		}
	}
	return cmd, ":" + num, nil
}

// stop ends a process this program started, with its children: the
// process group it leads (its id is the process's), first asked to end,
// then killed.
func stop(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}

// runNode runs bugs.js under Node from a fixed directory, so that the
// stacks name the same paths at every capture.
func runNode(build string, timeout time.Duration) ([]report, string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return nil, "", err
	}
	dir := filepath.Join(os.TempDir(), "strata-stacks")
	if err := os.RemoveAll(dir); err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	src := bugsJS
	if build == "b" {
		src = shiftBlock + src
	}
	for name, content := range map[string]string{"app/bugs.js": src, "sdk/v1/sdk.min.js": sdkJS, "node.js": nodeJS} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "node.js"), dir, strconv.Itoa(len(scriptBugs)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("node: %w: %s", err, tail(stderr.String()))
	}
	var res struct {
		Version string   `json:"version"`
		Reports []report `json:"reports"`
	}
	if err := json.Unmarshal(outb, &res); err != nil {
		return nil, "", fmt.Errorf("node printed %q: %w", tail(string(outb)), err)
	}
	for i := range res.Reports {
		res.Reports[i].Engine, res.Reports[i].Build = "node", build
	}
	got, err := byBug(res.Reports, scriptBugs)
	return got, "Node.js " + res.Version, err
}

// browserVersion asks a browser for its version.
func browserVersion(engine string) string {
	var cmd *exec.Cmd
	switch engine {
	case "chromium":
		cmd = exec.Command("chromium", "--version")
	case "firefox", "firefox-asyncstack":
		cmd = exec.Command("firefox-esr", "--version")
	case "webkit":
		cmd = exec.Command("dpkg-query", "-W", "-f", "WebKitGTK ${Version}", "libwebkit2gtk-4.1-0")
	}
	b, err := cmd.Output()
	if err != nil {
		return engine
	}
	return strings.TrimSpace(string(b))
}

// tail is the end of a browser's error output, for a failure's message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
