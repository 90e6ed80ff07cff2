package analytics

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Limits of a sourcemap upload (docs/errors.md, "Sourcemaps").
const (
	// MaxSourcemapBytes bounds an uploaded map, and again the minified
	// file uploaded with it.
	MaxSourcemapBytes = 10 << 20
	maxReleaseChars   = 200
	maxMapURLChars    = 2048
)

// Sourcemap is an uploaded source map of one file of one release: the map
// turns the frames of that release's minified file at URL back into
// original files, functions and lines. The map's text (and the minified
// file's, when uploaded) are kept apart, read by SourcemapContent.
type Sourcemap struct {
	ID        int64  `json:"id"`
	ProductID int64  `json:"productId"`
	Release   string `json:"release"`
	// URL is the minified file's address as error stacks name it.
	URL string `json:"url"`
	// Size is the map's length in bytes; Minified says whether the
	// minified file was uploaded with it.
	Size      int64     `json:"size"`
	Minified  bool      `json:"minified"`
	CreatedAt time.Time `json:"createdAt"`
}

// ErrSourcemapTooLarge is what ValidateSourcemap returns for a map or a
// minified file over MaxSourcemapBytes; the HTTP layer answers 413.
var ErrSourcemapTooLarge = Errorf(KindTooLarge, "payload_too_large",
	"A sourcemap, and a minified file, may be at most 10 MB each.")

// SourcemapTooComplex is the refusal of a map whose parsed form would take
// size bytes, over limit (package sourcemap measures both); the HTTP layer
// answers 413. The 10 MB a map may be is not the memory it takes: parsed,
// each mapping and each line costs about the same whatever its text, and a
// map of nothing but separators costs ten times its size.
func SourcemapTooComplex(size, limit int) *Error {
	return Errorf(KindTooLarge, "sourcemap_too_complex",
		"This sourcemap would take %.1f MB of memory once parsed, over the limit of %d MB for one map. "+
			"A bundler's map takes two to four times its size parsed; this one is mostly line separators or mappings without a source. "+
			"Upload the map the bundler wrote, or split the bundle into smaller files.",
		float64(size)/(1<<20), limit>>20)
}

// SourcemapAmount is an amount of a product's sourcemaps: uploads, and
// bytes of their maps and minified files together. It is both what they
// take (SourcemapStore.SourcemapUsage) and the quota they may take, where
// a zero field lifts its bound.
type SourcemapAmount struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Admit returns nil when an upload of size bytes (map and minified file)
// fits in the quota q beside used, what the product's other uploads take
// (not the upload it replaces, which it frees), else 403 quota_exceeded
// with what is used and how to free it.
func (q SourcemapAmount) Admit(used SourcemapAmount, size int64) error {
	var over string
	switch {
	case q.Count > 0 && used.Count+1 > q.Count:
		over = fmt.Sprintf("it keeps %d uploads, the most it may", used.Count)
		if used.Count == 1 {
			over = "it keeps 1 upload, the most it may"
		}
	case q.Bytes > 0 && used.Bytes+size > q.Bytes:
		over = fmt.Sprintf("its uploads take %s of the %s it may, and this one is %s",
			sizeText(used.Bytes), sizeText(q.Bytes), sizeText(size))
	default:
		return nil
	}
	e := Errorf(KindForbidden, "quota_exceeded",
		"This product's sourcemaps are at their quota: %s. Delete the sourcemaps of releases no longer served "+
			"(DELETE /api/v1/sourcemaps?release=…, with a query token, or in the dashboard's Errors page), then upload again.", over)
	e.Detail = map[string]any{"usage": used, "quota": q}
	return e
}

// sizeText writes bytes for a message, in the largest unit (of 2^10) it
// reaches.
func sizeText(bytes int64) string {
	switch {
	case bytes >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(bytes)/(1<<30))
	case bytes >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(bytes)/(1<<20))
	case bytes >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(bytes)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", bytes)
}

// ValidateSourcemap checks an upload: the release and URL, the map (a
// JSON object of version 3 with its mappings; an index map with sections
// is refused) and the optional minified file.
func ValidateSourcemap(release, url string, mapText, minified []byte) error {
	if n := utf8.RuneCountInString(release); n < 1 || n > maxReleaseChars || !utf8.ValidString(release) {
		return InvalidField("release", "is required: the release the map belongs to, 1 to %d characters, exactly as the SDK's release option", maxReleaseChars)
	}
	if n := utf8.RuneCountInString(url); n < 1 || n > maxMapURLChars || !utf8.ValidString(url) {
		return InvalidField("url", "is required: the minified file's URL as stacks name it, 1 to %d characters", maxMapURLChars)
	}
	if len(mapText) == 0 {
		return InvalidField("file", "is required: the sourcemap (.map) file")
	}
	if len(mapText) > MaxSourcemapBytes || len(minified) > MaxSourcemapBytes {
		return ErrSourcemapTooLarge
	}
	if !utf8.Valid(mapText) {
		return InvalidField("file", "must be a sourcemap: JSON text, and this is not UTF-8")
	}
	var m struct {
		Version  *int            `json:"version"`
		Mappings *string         `json:"mappings"`
		Sources  []string        `json:"sources"`
		Sections json.RawMessage `json:"sections"`
	}
	if err := json.Unmarshal(mapText, &m); err != nil {
		return InvalidField("file", "must be a sourcemap, a JSON object, and this is not one")
	}
	if m.Sections != nil {
		return InvalidField("file", "is an index map (it has sections), which is not supported: upload the map of each section's file on its own")
	}
	if m.Version == nil || *m.Version != 3 {
		return InvalidField("file", "must be a version 3 sourcemap (\"version\": 3)")
	}
	if m.Mappings == nil {
		return InvalidField("file", "must have mappings")
	}
	if !utf8.Valid(minified) {
		return InvalidField("minified", "must be the minified JavaScript file, as text")
	}
	return nil
}

// SourcemapStore keeps the products' sourcemaps, in the metadata store so
// that every node has them. Every method is scoped to one product.
type SourcemapStore interface {
	// PutSourcemap stores a map (and the minified file, or nil) for
	// sm's product, release and URL, replacing an earlier upload of the
	// same three, and fills in sm's ID, Size, Minified and CreatedAt.
	// The upload must fit in quota (SourcemapAmount.Admit, whose error it
	// returns, storing nothing): the product's usage is read and the
	// upload stored in one transaction, and the uploads of one product
	// take turns, on one node and across nodes sharing a store, so that
	// uploads made at once cannot pass the quota together.
	PutSourcemap(ctx context.Context, sm *Sourcemap, mapText, minified []byte, quota SourcemapAmount) error
	// SourcemapUsage returns what a product's sourcemaps take.
	SourcemapUsage(ctx context.Context, productID int64) (SourcemapAmount, error)
	// ListSourcemaps returns a product's uploads, of one release when
	// release is not "", newest first, without their content.
	ListSourcemaps(ctx context.Context, productID int64, release string) ([]Sourcemap, error)
	// SourcemapContent returns the map and the minified file (nil when
	// none was uploaded) of a release and URL, or ErrNotFound.
	SourcemapContent(ctx context.Context, productID int64, release, url string) (mapText, minified []byte, err error)
	// HasSourcemap reports whether a release and URL have a map, without
	// reading it: what ingest asks first, since most of the files its
	// frames name have none.
	HasSourcemap(ctx context.Context, productID int64, release, url string) (bool, error)
	// SourcemapText returns the map alone of a release and URL, or
	// ErrNotFound: what ingest parses, without reading the minified file.
	SourcemapText(ctx context.Context, productID int64, release, url string) ([]byte, error)
	// DeleteSourcemaps deletes a release's uploads and reports how many
	// there were.
	DeleteSourcemaps(ctx context.Context, productID int64, release string) (int64, error)
}
