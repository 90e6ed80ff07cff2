package analytics

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of an annotation's text, in Unicode characters. The label is
// short enough to draw beside a marker (docs/annotations.md).
const (
	MaxAnnotationLabel       = 120
	MaxAnnotationDescription = 2000
)

// AnnotationScope says on which charts an annotation is drawn.
type AnnotationScope string

// The two scopes of an annotation: every chart of the workspace, or only
// the chart of one saved query (never an ad-hoc report).
const (
	ScopeWorkspace AnnotationScope = "workspace"
	ScopeQuery     AnnotationScope = "query"
)

// AnnotationColors are the six preset marker colours, in the order the
// dashboard offers them. The spec names only emerald; the other five are
// Strata's, chosen to stay distinguishable on light and dark charts
// (docs/annotations.md, "Colours").
var AnnotationColors = []string{"emerald", "sky", "amber", "rose", "violet", "slate"}

// ValidAnnotationColor reports whether c is one of AnnotationColors.
func ValidAnnotationColor(c string) bool { return slices.Contains(AnnotationColors, c) }

// Annotation is a vertical marker on time-series charts, labelling a
// deploy, an incident and the like. Annotations belong to a workspace, not
// to a product: every product of the workspace sees them.
type Annotation struct {
	ID          int64           `json:"id"`
	WorkspaceID int64           `json:"-"`
	Date        time.Time       `json:"date"`
	Label       string          `json:"label"`
	Description string          `json:"description"`
	Scope       AnnotationScope `json:"scope"`
	// QueryID is the saved query a query-scoped annotation is drawn on;
	// nil for a workspace annotation.
	QueryID *int64 `json:"queryId"`
	Color   string `json:"color"`
	// CreatedBy describes the credential that created the annotation by
	// its kind and shown prefix ("key st_live_abcd…"), never its secret.
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}

// AnnotationFilter selects the annotations of one workspace that a chart,
// the list or the CSV export shows.
type AnnotationFilter struct {
	WorkspaceID int64
	// QueryID, when non-zero, adds that saved query's annotations to the
	// workspace-scoped ones; zero selects workspace-scoped ones only.
	QueryID int64
	// From and To bound Date, both inclusive; a zero time is unbounded.
	From, To time.Time
}

// AnnotationStore keeps chart annotations. Every method is scoped to one
// workspace: an annotation of another workspace is ErrNotFound to it, is
// never listed and is never deleted through it.
type AnnotationStore interface {
	// CreateAnnotation stores a (WorkspaceID, Date, Label, Description,
	// Scope, QueryID, Color and CreatedBy set) and fills in its ID and
	// CreatedAt. A query-scoped annotation's QueryID must name a saved
	// query of a product of the same workspace; otherwise it returns
	// ErrNotFound and stores nothing. The caller validates every other
	// field.
	CreateAnnotation(ctx context.Context, a *Annotation) error
	// ListAnnotations returns one page of the annotations f selects,
	// newest Date first (ties: newest ID first), skipping offset and
	// returning at most limit, and the total f selects over all pages.
	ListAnnotations(ctx context.Context, f AnnotationFilter, offset, limit int) ([]Annotation, int, error)
	// EachAnnotation calls fn for every annotation f selects, in the order
	// of ListAnnotations, without holding them all in memory. It stops and
	// returns fn's error if fn fails.
	EachAnnotation(ctx context.Context, f AnnotationFilter, fn func(Annotation) error) error
	// DeleteAnnotation removes one annotation of a workspace, or returns
	// ErrNotFound when the workspace has no annotation with that id.
	DeleteAnnotation(ctx context.Context, workspaceID, id int64) error
	// DeleteAnnotations removes the annotations of a workspace among ids
	// and returns how many it removed; ids of other workspaces and unknown
	// ids are skipped, and a repeated id counts once.
	DeleteAnnotations(ctx context.Context, workspaceID int64, ids []int64) (int, error)
}

// Validate checks every rule an annotation's own fields must meet before it
// is stored, in the order label, date, color, scope, queryId, description,
// and returns the first fault as an InvalidField error naming the field as
// the API does. An empty Label, Color or Scope and a zero Date count as
// missing. Whether QueryID names a saved query of the workspace is the
// store's check, since only the store can make it.
func (a *Annotation) Validate() error {
	switch n := utf8.RuneCountInString(a.Label); {
	case a.Label == "":
		return InvalidField("label", "is required")
	case n > MaxAnnotationLabel:
		return InvalidField("label", "must be 1 to %d characters, not %d", MaxAnnotationLabel, n)
	case strings.TrimSpace(a.Label) == "":
		return InvalidField("label", "must not be blank")
	case strings.IndexFunc(a.Label, unicode.IsControl) >= 0:
		return InvalidField("label", "must not contain control characters such as line breaks")
	}

	if a.Date.IsZero() {
		return InvalidField("date", "is required")
	}
	if y := a.Date.UTC().Year(); y < 1 || y > 9999 {
		return InvalidField("date", "must fall in the years 1 to 9999 (UTC), not %d", y)
	}

	if a.Color == "" {
		return InvalidField("color", "is required")
	}
	if !ValidAnnotationColor(a.Color) {
		c := AnnotationColors
		return InvalidField("color", "must be one of %s or %s, not %q", strings.Join(c[:len(c)-1], ", "), c[len(c)-1], a.Color)
	}

	switch a.Scope {
	case "":
		return InvalidField("scope", "is required")
	case ScopeWorkspace:
		if a.QueryID != nil {
			return InvalidField("queryId", "must be left out when scope is workspace")
		}
	case ScopeQuery:
		if a.QueryID == nil {
			return InvalidField("queryId", "is required when scope is query")
		}
		if *a.QueryID < 1 {
			return InvalidField("queryId", "must be a saved query's id, a positive integer, not %d", *a.QueryID)
		}
	default:
		return InvalidField("scope", "must be workspace or query, not %q", a.Scope)
	}

	if n := utf8.RuneCountInString(a.Description); n > MaxAnnotationDescription {
		return InvalidField("description", "must be at most %d characters, not %d", MaxAnnotationDescription, n)
	}
	if strings.ContainsRune(a.Description, 0) {
		return InvalidField("description", "must not contain NUL characters")
	}
	return nil
}
