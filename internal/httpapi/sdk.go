package httpapi

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"strconv"
)

// The browser SDK is built from sdk/browser (make sdk copies its dist here)
// and embedded, so one binary serves the script its customers' pages load.
//
//go:embed sdkjs/sdk.min.js sdkjs/sdk.min.js.map
var sdkFS embed.FS

// sdkFile is one embedded SDK file with its validator.
type sdkFile struct {
	body        []byte
	etag        string
	contentType string
}

func loadSDKFile(name, contentType string) sdkFile {
	b, err := sdkFS.ReadFile("sdkjs/" + name)
	if err != nil {
		panic("httpapi: embedded SDK file missing: " + name)
	}
	sum := sha256.Sum256(b)
	return sdkFile{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, contentType: contentType}
}

var (
	sdkScript = loadSDKFile("sdk.min.js", "text/javascript; charset=utf-8")
	sdkMap    = loadSDKFile("sdk.min.js.map", "application/json")
)

// serveSDK serves an SDK file for a week of browser and CDN caching (the
// path carries the major version only, so a fix must reach pages within
// days), revalidated by ETag after that, and open to every origin, as
// pages load it with crossorigin for subresource integrity and error
// details.
func serveSDK(f sdkFile) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cache-Control", "public, max-age=604800")
		h.Set("ETag", f.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Header.Get("If-None-Match") == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", f.contentType)
		h.Set("Content-Length", strconv.Itoa(len(f.body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(f.body)
		}
	})
}
