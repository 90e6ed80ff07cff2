package analytics

import (
	"slices"
	"time"
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
// DESIGN.md's, chosen to stay distinguishable on light and dark charts.
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
