package e2e

// Every answer the suite gets from a strata server is checked against
// api/openapi.yaml, so that the server, the document's examples and the
// clients generated from the document cannot drift apart: a test that
// receives a body its operation's schema rejects, a status the operation
// does not list, or a JSON answer from a path the document does not describe
// fails, naming the operation, the status and the schema's complaint.
//
// The check sits in the transport of httpClient (and of the other clients
// the suite sends with), so every helper that sends through them is checked
// without calling anything. A request made with do() carries its test, which
// the failure is reported to; one made by other code is reported to the test
// that started the server it was sent to (see strataServers).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// contract is api/openapi.yaml, loaded and routed once per test binary.
var contract = sync.OnceValues(func() (*contractChecker, error) {
	return loadContract(filepath.Join("..", "api", "openapi.yaml"))
})

// contractChecker validates responses against one OpenAPI document.
//
// Bodies are validated with santhosh-tekuri/jsonschema (JSON Schema
// 2020-12, the document's dialect) against schemas compiled once each and
// kept: kin-openapi's own VisitJSON compiles the schema again on every call
// (about 34 ms a response here), and falls back to OpenAPI 3.0's rules for a
// schema that refers to components without 3.1 keywords, which refuse a
// null where the document allows one. kin-openapi routes the request and
// checks the status and the headers.
type contractChecker struct {
	router routers.Router
	// anyPath are the answers any path may give (info.description), as
	// pointers to their schemas: 404 not_found for what is not served, 408
	// request_timeout for a request that did not arrive in time, 421
	// unknown_host for a Host the server does not serve and 431
	// headers_too_large.
	anyPath map[int]string

	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema // by JSON pointer into the document
}

// contractURL names the document for the JSON Schema compiler.
const contractURL = "file:///api/openapi.json"

// loadContract reads and validates the document at path and builds its
// router.
func loadContract(path string) (*contractChecker, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validating %s: %w", path, err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding %s as JSON: %w", path, err)
	}
	tree, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decoding %s as JSON: %w", path, err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	compiler.AssertFormat()
	if err := compiler.AddResource(contractURL, tree); err != nil {
		return nil, fmt.Errorf("%s as a JSON Schema resource: %w", path, err)
	}
	// The document names the default listen address as its server; the
	// suite's servers listen on random loopback ports, so routes match on
	// the path alone.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("routing %s: %w", path, err)
	}
	c := &contractChecker{router: router, compiler: compiler, schemas: map[string]*jsonschema.Schema{},
		anyPath: map[int]string{
			http.StatusNotFound:                    "/components/responses/NotFound/content/application~1json/schema",
			http.StatusRequestTimeout:              "/components/schemas/RequestTimeoutError",
			http.StatusMisdirectedRequest:          "/components/schemas/UnknownHostError",
			http.StatusRequestHeaderFieldsTooLarge: "/components/schemas/HeadersTooLargeError",
		}}
	for _, ptr := range c.anyPath {
		if _, err := c.schema(ptr); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// schema returns the compiled schema at ptr, a JSON pointer into the
// document, compiling it the first time.
func (c *contractChecker) schema(ptr string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.schemas[ptr]; s != nil {
		return s, nil
	}
	s, err := c.compiler.Compile(contractURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema at %s: %w", ptr, err)
	}
	c.schemas[ptr] = s
	return s, nil
}

// validate checks a JSON body against the schema at ptr.
func (c *contractChecker) validate(ptr string, body []byte) error {
	s, err := c.schema(ptr)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("the body does not match the schema at %s: %w", ptr, err)
	}
	return nil
}

// pointerEscape escapes one JSON pointer token (RFC 6901).
var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

// isJSON reports whether a Content-Type header names JSON.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// check validates one response to req. It returns nil when the document
// allows the response, or an error naming the operation, the status and
// what does not match.
func (c *contractChecker) check(req *http.Request, status int, header http.Header, body []byte) error {
	jsonBody := isJSON(header.Get("Content-Type"))
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		// A path or method the document does not describe: the server must
		// say so (404, or 405 on /e) or refuse the request (408, 421, 431);
		// any other JSON answer means a route the document is missing.
		// Other bodies (the dashboard's pages and assets) are outside the
		// contract.
		ptr, ok := c.anyPath[status]
		switch {
		case ok && jsonBody:
			if err := c.validate(ptr, body); err != nil {
				return fmt.Errorf("%s %s (not in the document) answered %d: %w", req.Method, req.URL.Path, status, err)
			}
			return nil
		case ok || status == http.StatusMethodNotAllowed || !jsonBody:
			return nil
		}
		return fmt.Errorf("%s %s answered %d with JSON, but the document describes no such operation (%v)",
			req.Method, req.URL.Path, status, err)
	}
	name := route.Operation.OperationID
	if name == "" {
		name = req.Method + " " + route.Path
	}
	key := strconv.Itoa(status)
	resp := route.Operation.Responses.Value(key)
	if resp == nil {
		// 404, 408, 421 and 431 may come from any path, even a described
		// one (an unknown id, a Host outside --allowed-hosts, headers too
		// large to read).
		if ptr, ok := c.anyPath[status]; ok {
			if err := c.validate(ptr, body); err != nil {
				return fmt.Errorf("operation %s answered %d: %w", name, status, err)
			}
			return nil
		}
		return fmt.Errorf("operation %s answered %d, a status the document does not list for it", name, status)
	}
	// The status and the headers, by kin-openapi; the body below.
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("operation %s answered %d: %w", name, status, err)
	}
	content := resp.Value.Content
	if len(content) == 0 || len(body) == 0 && req.Method == http.MethodHead {
		return nil
	}
	ct := header.Get("Content-Type")
	if content.Get(ct) == nil {
		return fmt.Errorf("operation %s answered %d with Content-Type %q, which the document does not list", name, status, ct)
	}
	// Bodies other than JSON (the SDK's scripts, the document itself) are
	// checked for their Content-Type only.
	if !jsonBody || content["application/json"] == nil || content["application/json"].Schema == nil {
		return nil
	}
	base := "/paths/" + pointerEscape.Replace(route.Path) + "/" + strings.ToLower(req.Method) + "/responses/" + key
	if resp.Ref != "" {
		base = strings.TrimPrefix(resp.Ref, "#")
	}
	if err := c.validate(base+"/content/application~1json/schema", body); err != nil {
		return fmt.Errorf("operation %s answered %d: %w", name, status, err)
	}
	return nil
}

// strataServers maps the host:port of each server the suite started to
// the test that started it, so that a response whose request carries no
// test is still reported to one.
var strataServers sync.Map // host → testing.TB

// testKey is the context key under which do() puts the test a request
// belongs to.
type testKey struct{}

// withTest returns req carrying t, to which a contract failure is reported.
func withTest(req *http.Request, t testing.TB) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), testKey{}, t))
}

// contractTransport checks every response from a server of the suite
// against the document and reports a mismatch to the test that sent the
// request (or started the server). The body is read whole and handed on
// unchanged.
type contractTransport struct{ base http.RoundTripper }

func (ct contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := ct.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	owner, ok := strataServers.Load(req.URL.Host)
	if !ok {
		return resp, nil
	}
	t, _ := req.Context().Value(testKey{}).(testing.TB)
	if t == nil {
		t = owner.(testing.TB)
	}
	body, readErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	var rest io.Reader = bytes.NewReader(body)
	if readErr != nil {
		// A body cut short is the test's business: hand on what arrived,
		// then the same error.
		rest = io.MultiReader(rest, errReader{readErr})
		resp.Body = io.NopCloser(rest)
		return resp, nil
	}
	resp.Body = io.NopCloser(rest)
	c, err := contract()
	if err != nil {
		t.Errorf("the API contract: %v", err)
		return resp, nil
	}
	start := time.Now()
	err = c.check(contractRequest(req), resp.StatusCode, resp.Header, body)
	contractStats.add(time.Since(start))
	if err != nil {
		t.Errorf("the response does not match api/openapi.yaml: %v", err)
	}
	return resp, nil
}

// contractStats counts the responses checked and the time the checks took,
// which TestMain prints: the cost the check adds to the suite.
var contractStats checkStats

// checkStats is a count and a total duration, safe for concurrent use.
type checkStats struct {
	mu    sync.Mutex
	n     int
	spent time.Duration
}

func (s *checkStats) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.spent += d
}

// String says how many responses were checked and how long that took.
func (s *checkStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("api/openapi.yaml: %d responses checked in %v", s.n, s.spent.Round(time.Millisecond))
}

// contractRequest returns req as the router should see it: with its body
// (already sent) left out.
func contractRequest(req *http.Request) *http.Request {
	r := req.Clone(context.Background())
	r.Body = http.NoBody
	r.URL = &url.URL{Scheme: "http", Host: req.URL.Host, Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	return r
}

// errReader returns its error on every read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
