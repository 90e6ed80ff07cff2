// Package openapicheck checks HTTP responses against api/openapi.yaml:
// the status (listed for the operation, or one any path may give), the
// headers, the Content-Type and a JSON body against the operation's schema.
//
// Two kinds of client use it: the Go end-to-end suite (e2e/openapi_test.go),
// from the transport of its HTTP clients, and the Node suites (the browser
// SDK's, the Node SDK's, the dashboard's and the WordPress plugin's), through
// the reverse proxy of cmd/openapi-proxy that e2e/browser/harness.mjs puts
// in front of every server it starts. One checker, so that every suite holds
// the server to the same reading of the document.
package openapicheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Checker validates responses against one OpenAPI document.
//
// Bodies are validated with santhosh-tekuri/jsonschema (JSON Schema
// 2020-12, the document's dialect) against schemas compiled once each and
// kept: kin-openapi's own VisitJSON compiles the schema again on every call
// (about 34 ms a response here), and falls back to OpenAPI 3.0's rules for a
// schema that refers to components without 3.1 keywords, which refuse a
// null where the document allows one. kin-openapi routes the request and
// checks the status and the headers.
type Checker struct {
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

// Load reads and validates the document at path and builds its
// router.
func Load(path string) (*Checker, error) {
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
	c := &Checker{router: router, compiler: compiler, schemas: map[string]*jsonschema.Schema{},
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
func (c *Checker) schema(ptr string) (*jsonschema.Schema, error) {
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
func (c *Checker) validate(ptr string, body []byte) error {
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

// IsJSON reports whether a Content-Type header names JSON.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// Check validates one response to req. It returns nil when the document
// allows the response, or an error naming the operation, the status and
// what does not match.
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) error {
	_, err := c.Inspect(req, status, header, body)
	return err
}

// Result says what Inspect held a response to.
type Result struct {
	// Operation is the id of the operation the request routed to, or ""
	// when the document describes no operation at its path and method.
	Operation string
	// Schema is true when a JSON body was validated against a schema.
	Schema bool
}

// Inspect is Check, and also says what the response was checked against,
// for the counts the proxy reports.
func (c *Checker) Inspect(req *http.Request, status int, header http.Header, body []byte) (Result, error) {
	var res Result
	jsonBody := IsJSON(header.Get("Content-Type"))
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
			res.Schema = true
			if err := c.validate(ptr, body); err != nil {
				return res, fmt.Errorf("%s %s (not in the document) answered %d: %w", req.Method, req.URL.Path, status, err)
			}
			return res, nil
		case ok || status == http.StatusMethodNotAllowed || !jsonBody:
			return res, nil
		}
		return res, fmt.Errorf("%s %s answered %d with JSON, but the document describes no such operation (%v)",
			req.Method, req.URL.Path, status, err)
	}
	name := route.Operation.OperationID
	if name == "" {
		name = req.Method + " " + route.Path
	}
	res.Operation = name
	key := strconv.Itoa(status)
	// The answers of the role check (the session scheme's "Roles"): 403
	// role_forbidden from any operation that declares member or admin in
	// x-strata-role, and 404 product_not_found or workspace_not_found from
	// any that declares a role, for a product or workspace outside the
	// user's workspaces.
	if ptr, ok := roleAnswer(route.Operation.Extensions, status, body); ok && jsonBody {
		res.Schema = true
		if err := c.validate(ptr, body); err != nil {
			return res, fmt.Errorf("operation %s answered %d: %w", name, status, err)
		}
		return res, nil
	}
	resp := route.Operation.Responses.Value(key)
	if resp == nil {
		// 404, 408, 421 and 431 may come from any path, even a described
		// one (an unknown id, a Host outside --allowed-hosts, headers too
		// large to read).
		if ptr, ok := c.anyPath[status]; ok {
			res.Schema = true
			if err := c.validate(ptr, body); err != nil {
				return res, fmt.Errorf("operation %s answered %d: %w", name, status, err)
			}
			return res, nil
		}
		return res, fmt.Errorf("operation %s answered %d, a status the document does not list for it", name, status)
	}
	// The status and the headers, by kin-openapi; the body below.
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return res, fmt.Errorf("operation %s answered %d: %w", name, status, err)
	}
	content := resp.Value.Content
	if len(content) == 0 || len(body) == 0 && req.Method == http.MethodHead {
		return res, nil
	}
	ct := header.Get("Content-Type")
	if content.Get(ct) == nil {
		return res, fmt.Errorf("operation %s answered %d with Content-Type %q, which the document does not list", name, status, ct)
	}
	// Bodies other than JSON (the SDK's scripts, the document itself) are
	// checked for their Content-Type only.
	if !jsonBody || content["application/json"] == nil || content["application/json"].Schema == nil {
		return res, nil
	}
	base := "/paths/" + pointerEscape.Replace(route.Path) + "/" + strings.ToLower(req.Method) + "/responses/" + key
	if resp.Ref != "" {
		base = strings.TrimPrefix(resp.Ref, "#")
	}
	res.Schema = true
	if err := c.validate(base+"/content/application~1json/schema", body); err != nil {
		return res, fmt.Errorf("operation %s answered %d: %w", name, status, err)
	}
	return res, nil
}

// Request returns req as the router should see it: with its body
// (already sent) left out.
func Request(req *http.Request) *http.Request {
	r := req.Clone(context.Background())
	r.Body = http.NoBody
	r.URL = &url.URL{Scheme: "http", Host: req.URL.Host, Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	return r
}

// roleAnswer returns the schema of an answer of the role check that an
// operation with extensions ext may give with status and body, and whether
// it is one.
func roleAnswer(ext map[string]any, status int, body []byte) (string, bool) {
	role, _ := ext["x-strata-role"].(string)
	code := ""
	if status == http.StatusForbidden || status == http.StatusNotFound {
		code = errorCode(body)
	}
	switch {
	case status == http.StatusForbidden && code == "role_forbidden" && (role == "member" || role == "admin"):
		return "/components/responses/RoleForbidden/content/application~1json/schema", true
	case status == http.StatusNotFound && code == "product_not_found" && role != "" && role != "none":
		return "/components/responses/ProductNotFound/content/application~1json/schema", true
	case status == http.StatusNotFound && code == "workspace_not_found" && role != "" && role != "none":
		return "/components/responses/WorkspaceNotFound/content/application~1json/schema", true
	}
	return "", false
}

// errorCode is the error.code of an error body, "" when there is none.
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Code
}
