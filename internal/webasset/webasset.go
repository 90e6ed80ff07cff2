// Package webasset serves files embedded in the binary (the dashboard's
// build, the browser SDK, the API contract): each is prepared once at start with its content
// type and a strong ETag from its content, gzipped (text only) when a
// client first takes gzip, and served with 304 answers to a matching
// If-None-Match. Callers set their own caching and security headers
// before Serve.
package webasset

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// File is one embedded file, ready to serve.
type File struct {
	Body        []byte
	ETag        string
	ContentType string
	// The gzipped copy is made on the first request that takes gzip, not
	// when the file is prepared: the files are prepared as the package
	// starts, in every strata process (each CLI command too), and
	// compressing them all took about 0.2 s of CPU there.
	compress bool
	gzipOnce sync.Once
	gzipped  []byte
}

// New prepares the file named name (its extension picks the content type).
func New(name string, body []byte) *File {
	sum := sha256.Sum256(body)
	f := &File{Body: body, ETag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	switch path.Ext(name) {
	case ".js", ".mjs":
		f.ContentType = "text/javascript; charset=utf-8"
	case ".html":
		f.ContentType = "text/html; charset=utf-8"
	case ".map":
		f.ContentType = "application/json"
	case ".yaml", ".yml":
		// RFC 9512; not in Go's built-in table, and the system's differs
		// from machine to machine.
		f.ContentType = "application/yaml; charset=utf-8"
	default:
		f.ContentType = mime.TypeByExtension(path.Ext(name))
	}
	if f.ContentType == "" {
		f.ContentType = "application/octet-stream"
	}
	f.compress = compressible(f.ContentType) && len(body) > 512
	return f
}

// gzipCopy returns the gzipped copy, made once, or nil when the file is not
// text or does not shrink.
func (f *File) gzipCopy() []byte {
	if !f.compress {
		return nil
	}
	f.gzipOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(f.Body)
		zw.Close()
		if b.Len() < len(f.Body) {
			f.gzipped = b.Bytes()
		}
	})
	return f.gzipped
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.Contains(ctype, "json") || strings.Contains(ctype, "svg") ||
		strings.Contains(ctype, "yaml")
}

// Serve writes the file with status: 304 instead when status is 200 and
// the request's If-None-Match is the file's ETag, and the gzipped copy
// when the client takes gzip.
func (f *File) Serve(w http.ResponseWriter, r *http.Request, status int) {
	hd := w.Header()
	hd.Set("ETag", f.ETag)
	hd.Set("Vary", "Accept-Encoding")
	if status == http.StatusOK && r.Header.Get("If-None-Match") == f.ETag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.Body
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		if gz := f.gzipCopy(); gz != nil {
			body = gz
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("Content-Type", f.ContentType)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
