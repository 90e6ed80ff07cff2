// Package dashboard serves Strata's web dashboard: a TypeScript single-page
// app (dashboard/ at the repository root) whose built files are embedded
// here, so that one binary serves it at the same origin as the API and
// `go build` needs no Node. `npm run build` in dashboard/ writes dist/,
// which is copied here and committed (dashboard/README.md).
//
// The app routes in the browser with the history API, so every page path
// answers with index.html and the app draws the page. The paths are listed
// here too, so that an unknown path is a real 404 and the Errors page
// exists only while its feature flag is on.
package dashboard

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"strata/internal/webasset"
)

//go:embed all:dist
var distFS embed.FS

// pages are the dashboard's page paths. A path equal to one, or below one
// that ends in "/", is a page.
var pages = []string{
	"/", "/trends", "/funnels", "/retention", "/acquisition", "/annotations",
	"/replays", "/replays/", "/users", "/users/", "/messages", "/messages/", "/experiments", "/experiments/", "/flags", "/flags/", "/settings", "/settings/", "/api-reference",
}

// errorPages are the Errors pages' paths, the list and a group's page
// (/errors/{fingerprint}), pages only while error tracking is on.
var errorPages = []string{"/errors", "/errors/"}

// Headers every HTML answer carries. The policy admits only this origin's
// scripts, styles and API: the app has no inline script, and a page that
// cannot be framed cannot be clickjacked.
var htmlHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "same-origin",
	"X-Content-Type-Options": "nosniff",
	"Cache-Control":          "no-cache",
}

// previewPage is the message editor's preview frame (dashboard/public/
// message-preview.html), which the Messages page frames sandboxed. The SDK's
// message renderer it loads keeps its stylesheet inline in a shadow root, so
// the page gets a policy of its own: this origin's scripts and styles plus
// inline styles, no requests, and framing by this origin only.
const previewPage = "/message-preview.html"

// previewHeaders replace htmlHeaders for previewPage.
var previewHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'self'",
	"X-Frame-Options":        "SAMEORIGIN",
	"Referrer-Policy":        "same-origin",
	"X-Content-Type-Options": "nosniff",
	"Cache-Control":          "no-cache",
}

// replayPlayer is the path prefix of a replay's page, whose player rebuilds
// the recorded page in an iframe that shares the document's policy. The
// recorded page's stylesheets are inline <style> elements and style
// attributes, and its images and fonts come from the customer's site, so
// that document's policy admits inline styles and images and fonts from
// anywhere; scripts stay this origin's only (the recording holds none: rrweb
// drops them). The dashboard's links to a replay load the document anew
// (Link's reload), so no other page is ever first loaded with this policy.
const replayPlayer = "/replays/"

// replayHeaders replace htmlHeaders for replayPlayer's pages.
var replayHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https: http:; " +
		"connect-src 'self'; font-src 'self' data: https:; media-src 'self' data: blob: https:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "same-origin",
	"X-Content-Type-Options": "nosniff",
	"Cache-Control":          "no-cache",
}

// file is one embedded file, ready to serve.
type file struct {
	*webasset.File
	// immutable marks Vite's content-hashed assets, cached for a year.
	immutable bool
}

// Handler serves the embedded dashboard.
type Handler struct {
	files         map[string]*file
	index         *file
	errorTracking bool
}

// New loads the embedded files. errorTracking makes /errors a page.
func New(errorTracking bool) (*Handler, error) {
	return newHandler(distFS, "dist", errorTracking)
}

func newHandler(fsys fs.FS, root string, errorTracking bool) (*Handler, error) {
	sub, err := fs.Sub(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("opening the dashboard files: %w", err)
	}
	h := &Handler{files: map[string]*file{}, errorTracking: errorTracking}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		h.files["/"+p] = load(p, body)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading the dashboard files: %w", err)
	}
	if h.index = h.files["/index.html"]; h.index == nil {
		return nil, fmt.Errorf("the dashboard has no index.html; build it (dashboard/README.md)")
	}
	return h, nil
}

// load prepares a file; Vite's content-hashed assets never change.
func load(p string, body []byte) *file {
	return &file{File: webasset.New(p, body), immutable: strings.HasPrefix(p, "assets/")}
}

// ServePage implements httpapi.Pages: the file at the path, index.html for
// a page path (404 for /errors while error tracking is off, and for an
// unknown path a browser navigates to), or false for anything else, which
// the caller answers with its JSON 404.
func (h *Handler) ServePage(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if f := h.files[p]; f != nil && p != "/index.html" {
		serve(w, r, f, http.StatusOK)
		return true
	}
	switch {
	case h.isPage(p):
		serve(w, r, h.index, http.StatusOK)
	case strings.HasPrefix(p, "/assets/"):
		return false // a missing asset is not a page
	case strings.Contains(r.Header.Get("Accept"), "text/html"):
		// A person followed a bad link: show the app's own 404 page.
		serve(w, r, h.index, http.StatusNotFound)
	default:
		return false
	}
	return true
}

// isPage reports whether p is one of the dashboard's page paths.
func (h *Handler) isPage(p string) bool {
	list := pages
	if h.errorTracking {
		list = append(append([]string(nil), pages...), errorPages...)
	}
	for _, page := range list {
		if p == page || strings.HasSuffix(page, "/") && page != "/" && strings.HasPrefix(p, page) {
			return true
		}
	}
	return false
}

// serve writes a file with its caching and, for HTML, security headers.
func serve(w http.ResponseWriter, r *http.Request, f *file, status int) {
	hd := w.Header()
	switch {
	case r.URL.Path == previewPage:
		for k, v := range previewHeaders {
			hd.Set(k, v)
		}
	case strings.HasPrefix(f.ContentType, "text/html") && strings.HasPrefix(r.URL.Path, replayPlayer) && len(r.URL.Path) > len(replayPlayer):
		for k, v := range replayHeaders {
			hd.Set(k, v)
		}
	case strings.HasPrefix(f.ContentType, "text/html"):
		for k, v := range htmlHeaders {
			hd.Set(k, v)
		}
	case f.immutable:
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	default:
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cache-Control", "public, max-age=3600")
	}
	f.Serve(w, r, status)
}
