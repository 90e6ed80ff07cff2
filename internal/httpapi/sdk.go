package httpapi

import (
	"embed"
	"net/http"

	"strata/internal/webasset"
)

// The browser SDK is built from sdk/browser (`make build` copies its dist
// here) and embedded, so one binary serves the scripts its customers' pages
// load: the SDK, the message renderer the SDK adds when a product has
// active messages (docs/messages.md), and the session recorder it adds
// when a page turns replay on (docs/replay.md).
//
//go:embed sdkjs/sdk.min.js sdkjs/sdk.min.js.map sdkjs/messages.min.js sdkjs/messages.min.js.map sdkjs/replay.min.js sdkjs/replay.min.js.map
var sdkFS embed.FS

func loadSDKFile(name string) *webasset.File {
	b, err := sdkFS.ReadFile("sdkjs/" + name)
	if err != nil {
		panic("httpapi: embedded SDK file missing: " + name)
	}
	return webasset.New(name, b)
}

var (
	sdkScript      = loadSDKFile("sdk.min.js")
	sdkMap         = loadSDKFile("sdk.min.js.map")
	messagesScript = loadSDKFile("messages.min.js")
	messagesMap    = loadSDKFile("messages.min.js.map")
	replayScript   = loadSDKFile("replay.min.js")
	replayMap      = loadSDKFile("replay.min.js.map")
)

// serveSDK serves an SDK file for a week of browser and CDN caching (the
// path carries the major version only, so a fix must reach pages within
// days), revalidated by ETag after that, gzipped when the client takes it,
// and open to every origin, as pages load it with crossorigin for
// subresource integrity and error details.
func serveSDK(f *webasset.File) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cache-Control", "public, max-age=604800")
		h.Set("X-Content-Type-Options", "nosniff")
		f.Serve(w, r, http.StatusOK)
	})
}
