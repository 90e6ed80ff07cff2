package analytics

import (
	"context"
	"encoding/json"
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
	PutSourcemap(ctx context.Context, sm *Sourcemap, mapText, minified []byte) error
	// ListSourcemaps returns a product's uploads, of one release when
	// release is not "", newest first, without their content.
	ListSourcemaps(ctx context.Context, productID int64, release string) ([]Sourcemap, error)
	// SourcemapContent returns the map and the minified file (nil when
	// none was uploaded) of a release and URL, or ErrNotFound.
	SourcemapContent(ctx context.Context, productID int64, release, url string) (mapText, minified []byte, err error)
	// DeleteSourcemaps deletes a release's uploads and reports how many
	// there were.
	DeleteSourcemaps(ctx context.Context, productID int64, release string) (int64, error)
}
