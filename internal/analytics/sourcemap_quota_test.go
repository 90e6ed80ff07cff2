package analytics

import (
	"strings"
	"testing"
)

// TestSourcemapQuotaAdmit checks the quota's bounds at their edges: a
// zero field is no bound, an upload that fills the quota exactly is
// admitted, one past it is refused with what is used, and the refusal
// carries the figures.
func TestSourcemapQuotaAdmit(t *testing.T) {
	q := SourcemapAmount{Count: 3, Bytes: 1000}
	for _, c := range []struct {
		name  string
		quota SourcemapAmount
		used  SourcemapAmount
		size  int64
		says  string // "" when admitted
	}{
		{"no bounds", SourcemapAmount{}, SourcemapAmount{Count: 1e6, Bytes: 1e12}, 1e7, ""},
		{"the last upload", q, SourcemapAmount{Count: 2, Bytes: 500}, 500, ""},
		{"one upload too many", q, SourcemapAmount{Count: 3, Bytes: 0}, 1, "it keeps 3 uploads, the most it may"},
		{"one", SourcemapAmount{Count: 1}, SourcemapAmount{Count: 1}, 1, "it keeps 1 upload, the most it may"},
		{"one byte too many", q, SourcemapAmount{Count: 1, Bytes: 500}, 501, "its uploads take 500 bytes of the 1000 bytes it may, and this one is 501 bytes"},
		{"in MB", SourcemapAmount{Bytes: 1 << 30}, SourcemapAmount{Bytes: 1000 << 20}, 30 << 20, "its uploads take 1000.0 MB of the 1.0 GB it may, and this one is 30.0 MB"},
	} {
		err := c.quota.Admit(c.used, c.size)
		if c.says == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		e := AsError(err)
		if err == nil || e.Code != "quota_exceeded" || e.Kind != KindForbidden || !strings.Contains(e.Message, c.says) ||
			!strings.Contains(e.Message, "DELETE /api/v1/sourcemaps?release=") || e.Detail["usage"] != c.used || e.Detail["quota"] != c.quota {
			t.Errorf("%s: %v %+v", c.name, err, e.Detail)
		}
	}
}
