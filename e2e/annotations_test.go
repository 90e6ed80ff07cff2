package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

// The annotation API, driven over HTTP against the real binary. Annotations
// belong to a workspace, and the management commands create products only in
// the first workspace (there is no command for another one), so the tests
// seed further workspaces into the data directory through the store before
// the server first opens it, as an operator's script would, and create
// their credentials the way the server does: a random secret of the
// documented shape, of which only the SHA-256 and the prefix are stored.

// seededTenant is a product of a seeded workspace with a query token and a
// live API key.
type seededTenant struct {
	WorkspaceID, ProductID int64
	Token, Live            string
}

// randomBase62 returns n random base62 characters.
func randomBase62(t *testing.T, n int) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var b strings.Builder
	for range n {
		i, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteByte(alphabet[i.Int64()])
	}
	return b.String()
}

// seedWorkspaces opens the embedded store of an empty data directory,
// creates the workspace "Default" (where `products create` puts products)
// and then one workspace per name, each with a product, a query token and
// a live key, and closes the store again. The server started on dataDir
// afterwards finds the workspaces and bootstraps nothing.
func seedWorkspaces(t *testing.T, dataDir string, names ...string) []seededTenant {
	t.Helper()
	ctx := context.Background()
	st, err := duckdb.Open(ctx, dataDir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateWorkspace(ctx, "Default"); err != nil {
		t.Fatal(err)
	}
	var out []seededTenant
	for _, name := range names {
		w, err := st.CreateWorkspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := st.CreateProduct(ctx, w.ID, name+" product")
		if err != nil {
			t.Fatal(err)
		}
		tn := seededTenant{WorkspaceID: w.ID, ProductID: p.ID,
			Token: "st_tok_" + randomBase62(t, 40), Live: "st_live_" + randomBase62(t, 32)}
		tokHash, keyHash := sha256.Sum256([]byte(tn.Token)), sha256.Sum256([]byte(tn.Live))
		tok := analytics.QueryToken{ProductID: p.ID, Hash: tokHash[:], Prefix: tn.Token[:11]}
		if err := st.CreateQueryToken(ctx, &tok); err != nil {
			t.Fatal(err)
		}
		key := analytics.APIKey{ProductID: p.ID, Hash: keyHash[:], Prefix: tn.Live[:12], Env: analytics.EnvLive}
		if err := st.CreateAPIKey(ctx, &key); err != nil {
			t.Fatal(err)
		}
		out = append(out, tn)
	}
	return out
}

// annCall sends an annotation API request with a bearer credential ("" for
// none) and a JSON body (nil for none; a string or []byte is sent as is).
func annCall(t *testing.T, s *server, cred, method, path string, body any) response {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		raw, _ = json.Marshal(b)
	}
	h := map[string]string{"Content-Type": "application/json"}
	if cred != "" {
		h["Authorization"] = "Bearer " + cred
	}
	return do(t, method, s.URL+path, raw, h)
}

// annotation is an annotation as the API answers it.
type annotation struct {
	ID          int64     `json:"id"`
	Date        time.Time `json:"date"`
	Label       string    `json:"label"`
	Description string    `json:"description"`
	Scope       string    `json:"scope"`
	QueryID     *int64    `json:"queryId"`
	Color       string    `json:"color"`
	CreatedBy   string    `json:"createdBy"`
	CreatedAt   time.Time `json:"createdAt"`
}

type annotationList struct {
	Items    []annotation `json:"items"`
	Page     int          `json:"page"`
	PageSize int          `json:"pageSize"`
	Total    int          `json:"total"`
}

// newAnnotation is a valid create body; the caller changes what it needs.
func newAnnotation(label string, at time.Time) map[string]any {
	return map[string]any{"label": label, "date": at.Format(time.RFC3339Nano), "color": "emerald", "scope": "workspace"}
}

// createAnnotation posts body and decodes the 201.
func createAnnotation(t *testing.T, s *server, cred string, body any) annotation {
	t.Helper()
	res := annCall(t, s, cred, "POST", "/api/v1/annotations", body)
	if res.Status != 201 {
		t.Fatalf("POST /api/v1/annotations %v: %d %s", body, res.Status, res.Body)
	}
	var a annotation
	if err := json.Unmarshal(res.Body, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// listAnnotations gets a list with the query parameters q and decodes the 200.
func listAnnotations(t *testing.T, s *server, cred string, q url.Values) annotationList {
	t.Helper()
	res := annCall(t, s, cred, "GET", "/api/v1/annotations?"+q.Encode(), nil)
	if res.Status != 200 {
		t.Fatalf("GET /api/v1/annotations?%s: %d %s", q.Encode(), res.Status, res.Body)
	}
	var l annotationList
	if err := json.Unmarshal(res.Body, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// allAnnotationIDs lists every page with q and returns the ids in order.
func allAnnotationIDs(t *testing.T, s *server, cred string, q url.Values) []int64 {
	t.Helper()
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	q2.Set("pageSize", "100")
	ids := []int64{}
	for page := 1; ; page++ {
		q2.Set("page", strconv.Itoa(page))
		l := listAnnotations(t, s, cred, q2)
		for _, a := range l.Items {
			ids = append(ids, a.ID)
		}
		if len(l.Items) < 100 {
			return ids
		}
	}
}

// saveQuery saves a trend query through the API and returns its id.
func saveQuery(t *testing.T, s *server, cred, name string) int64 {
	t.Helper()
	res := annCall(t, s, cred, "POST", "/api/v1/queries", map[string]any{
		"kind": "trend", "name": name, "definition": map[string]any{"series": []map[string]any{{"event": "$pageview"}}}})
	if res.Status != 201 {
		t.Fatalf("saving a query: %d %s", res.Status, res.Body)
	}
	var q struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(res.Body, &q)
	return q.ID
}

// wantError checks a status, an error code and, when field is not "", that
// the message starts with the field and a colon.
func wantError(t *testing.T, res response, status int, code, field string) {
	t.Helper()
	if res.Status != status {
		t.Errorf("status %d, want %d: %s", res.Status, status, res.Body)
		return
	}
	if got := res.ErrorCode(t); got != code {
		t.Errorf("code %q, want %q: %s", got, code, res.Body)
	}
	if field != "" {
		msg, _ := res.JSON(t)["error"].(map[string]any)["message"].(string)
		if !strings.HasPrefix(msg, field+":") {
			t.Errorf("message %q does not name %s first", msg, field)
		}
	}
}

func TestAnnotations(t *testing.T) {
	dir := t.TempDir()
	seeded := seedWorkspaces(t, dir, "Second", "Third")
	second, third := seeded[0], seeded[1]
	s := startServer(t, dir, "--annotation-rate-limit", "100000")
	a := newTenant(t, s, "A") // products A and B share the workspace "Default"
	b := newTenant(t, s, "B")
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

	t.Run("Unauthenticated", func(t *testing.T) {
		for _, r := range []struct{ method, path string }{
			{"POST", "/api/v1/annotations"}, {"GET", "/api/v1/annotations"}, {"DELETE", "/api/v1/annotations/1"},
			{"POST", "/api/v1/annotations/bulk-delete"}, {"GET", "/api/v1/annotations/export.csv"},
		} {
			wantError(t, annCall(t, s, "", r.method, r.path, newAnnotation("x", base)), 401, "missing_credentials", "")
			wantError(t, annCall(t, s, "st_tok_"+strings.Repeat("x", 40), r.method, r.path, newAnnotation("x", base)), 401, "invalid_credentials", "")
			res := do(t, r.method, s.URL+r.path, nil, map[string]string{"X-API-Key": a.Live})
			wantError(t, res, 401, "missing_credentials", "")
		}
		if l := listAnnotations(t, s, a.Token, nil); l.Total != 0 {
			t.Errorf("unauthenticated requests stored %d annotations", l.Total)
		}
	})

	otherQuery := saveQuery(t, s, second.Token, "Second's query")
	t.Run("Validation", func(t *testing.T) {
		valid := func(change map[string]any) map[string]any {
			body := newAnnotation("Deploy", base)
			for k, v := range change {
				if v == "<absent>" {
					delete(body, k)
				} else {
					body[k] = v
				}
			}
			return body
		}
		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"label missing", valid(map[string]any{"label": "<absent>"}), "label"},
			{"label null", valid(map[string]any{"label": nil}), "label"},
			{"label empty", valid(map[string]any{"label": ""}), "label"},
			{"label 121 characters", valid(map[string]any{"label": strings.Repeat("ü", 121)}), "label"},
			{"label blank", valid(map[string]any{"label": "  "}), "label"},
			{"label with a line break", valid(map[string]any{"label": "two\nlines"}), "label"},
			{"label a number", valid(map[string]any{"label": 7}), "label"},
			{"date missing", valid(map[string]any{"date": "<absent>"}), "date"},
			{"date a day only", valid(map[string]any{"date": "2026-11-01"}), "date"},
			{"date without offset", valid(map[string]any{"date": "2026-11-01T12:00:00"}), "date"},
			{"date nonsense", valid(map[string]any{"date": "yesterday"}), "date"},
			{"color missing", valid(map[string]any{"color": "<absent>"}), "color"},
			{"color not a preset", valid(map[string]any{"color": "red"}), "color"},
			{"color in capitals", valid(map[string]any{"color": "Emerald"}), "color"},
			{"scope missing", valid(map[string]any{"scope": "<absent>"}), "scope"},
			{"scope unknown", valid(map[string]any{"scope": "global"}), "scope"},
			{"queryId missing for query", valid(map[string]any{"scope": "query"}), "queryId"},
			{"queryId for workspace", valid(map[string]any{"queryId": otherQuery}), "queryId"},
			{"queryId zero", valid(map[string]any{"scope": "query", "queryId": 0}), "queryId"},
			{"queryId a string", valid(map[string]any{"scope": "query", "queryId": "5"}), "queryId"},
			{"queryId unknown", valid(map[string]any{"scope": "query", "queryId": 999999}), "queryId"},
			{"queryId of another workspace", valid(map[string]any{"scope": "query", "queryId": otherQuery}), "queryId"},
			{"description too long", valid(map[string]any{"description": strings.Repeat("d", 2001)}), "description"},
			{"description with NUL", valid(map[string]any{"description": "a\x00b"}), "description"},
			{"unknown field", valid(map[string]any{"author": "me"}), "author"},
			{"not an object", `["Deploy"]`, "body"},
			{"not JSON", `{"label":`, "body"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := annCall(t, s, a.Token, "POST", "/api/v1/annotations", c.body)
				wantError(t, res, 400, "invalid_request", c.field)
				if c.name == "unknown field" && !strings.Contains(string(res.Body), `author`) {
					t.Errorf("the unknown field is not named: %s", res.Body)
				}
			})
		}
		if l := listAnnotations(t, s, a.Token, url.Values{"queryId": {strconv.FormatInt(otherQuery, 10)}}); l.Total != 0 {
			t.Errorf("invalid requests stored %d annotations", l.Total)
		}
		// The list and export parameters are validated and named too.
		for _, q := range []string{"page=0", "page=x", "pageSize=0", "pageSize=101", "queryId=-1", "queryId=abc",
			"from=yesterday", "to=2026-13-01", "from=2026-11-02&to=2026-11-01"} {
			field, _, _ := strings.Cut(q, "=")
			if strings.Contains(q, "&") {
				field = "to"
			}
			wantError(t, annCall(t, s, a.Token, "GET", "/api/v1/annotations?"+q, nil), 400, "invalid_request", field)
			if !strings.HasPrefix(field, "page") {
				wantError(t, annCall(t, s, a.Token, "GET", "/api/v1/annotations/export.csv?"+q, nil), 400, "invalid_request", field)
			}
		}
		for _, body := range []struct{ body, field string }{
			{`{}`, "ids"}, {`{"ids":[]}`, "ids"}, {`{"ids":[1,0]}`, "ids[1]"}, {`{"ids":"1"}`, "ids"},
			{`{"ids":[1],"all":true}`, "all"},
			{fmt.Sprintf(`{"ids":[%s1]}`, strings.Repeat("1,", 1000)), "ids"},
		} {
			wantError(t, annCall(t, s, a.Token, "POST", "/api/v1/annotations/bulk-delete", body.body), 400, "invalid_request", body.field)
		}
	})

	t.Run("Created", func(t *testing.T) {
		res := annCall(t, s, a.Token, "POST", "/api/v1/annotations", map[string]any{
			"label": strings.Repeat("é", 120), "date": "2026-11-01T13:00:00.5+01:00", "color": "violet", "scope": "workspace",
			"description": "Long form.\nSecond line."})
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		var raw map[string]any
		json.Unmarshal(res.Body, &raw)
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"color", "createdAt", "createdBy", "date", "description", "id", "label", "queryId", "scope"}; !slices.Equal(keys, want) {
			t.Errorf("201 body has fields %v, want %v", keys, want)
		}
		if raw["date"] != "2026-11-01T12:00:00.5Z" || raw["queryId"] != nil || raw["scope"] != "workspace" ||
			raw["color"] != "violet" || raw["description"] != "Long form.\nSecond line." || raw["label"] != strings.Repeat("é", 120) {
			t.Errorf("201 body %s", res.Body)
		}
		var got annotation
		json.Unmarshal(res.Body, &got)
		if got.ID < 1 || time.Since(got.CreatedAt) > time.Minute || got.CreatedAt.Location() != time.UTC {
			t.Errorf("id %d createdAt %v", got.ID, got.CreatedAt)
		}
		if want := "token " + a.Token[:11] + "…"; got.CreatedBy != want {
			t.Errorf("createdBy %q, want %q", got.CreatedBy, want)
		}
		byKey := createAnnotation(t, s, a.Live, newAnnotation("by key", base))
		if want := "key " + a.Live[:12] + "…"; byKey.CreatedBy != want || strings.Contains(string(res.Body), a.Token) {
			t.Errorf("createdBy %q, want %q and never the secret", byKey.CreatedBy, want)
		}
		byTestKey := createAnnotation(t, s, a.Test, newAnnotation("by test key", base))
		if want := "key " + a.Test[:12] + "…"; byTestKey.CreatedBy != want {
			t.Errorf("createdBy %q, want %q", byTestKey.CreatedBy, want)
		}
		// A query annotation on a saved query of another product of the
		// same workspace is allowed: annotations belong to the workspace.
		q := saveQuery(t, s, b.Token, "B's query")
		onB := createAnnotation(t, s, a.Token, map[string]any{"label": "on B's query", "date": base.Format(time.RFC3339),
			"color": "sky", "scope": "query", "queryId": q})
		if onB.Scope != "query" || onB.QueryID == nil || *onB.QueryID != q {
			t.Errorf("query annotation %+v", onB)
		}
		// Clean up for the list test, which counts.
		if res := annCall(t, s, b.Token, "POST", "/api/v1/annotations/bulk-delete",
			map[string]any{"ids": []int64{got.ID, byKey.ID, byTestKey.ID, onB.ID}}); res.Status != 200 || !bytes.Equal(bytes.TrimSpace(res.Body), []byte(`{"deleted":4}`)) {
			t.Fatalf("cleaning up: %d %s", res.Status, res.Body)
		}
	})

	t.Run("ListPagingOrderScope", func(t *testing.T) {
		q1 := saveQuery(t, s, a.Token, "Q1")
		q2 := saveQuery(t, s, a.Token, "Q2")
		// 45 workspace annotations an hour apart, created out of date order,
		// two of them at the same instant; and query annotations of Q1 and Q2.
		var want []int64 // workspace annotations, newest date first
		byDate := map[int]int64{}
		for _, i := range []int{3, 0, 44, 10, 20, 7, 1, 2, 4, 5, 6, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43} {
			byDate[i] = createAnnotation(t, s, a.Token, newAnnotation(fmt.Sprintf("w%02d", i), base.Add(time.Duration(i)*time.Hour))).ID
		}
		tie := createAnnotation(t, s, b.Token, newAnnotation("tie with w20", base.Add(20*time.Hour))).ID
		for i := 44; i >= 0; i-- {
			if i == 20 {
				want = append(want, tie) // same date: the newer annotation first
			}
			want = append(want, byDate[i])
		}
		onQ1 := createAnnotation(t, s, a.Token, map[string]any{"label": "on Q1", "date": base.Add(30*time.Minute + 20*time.Hour).Format(time.RFC3339),
			"color": "rose", "scope": "query", "queryId": q1}).ID
		createAnnotation(t, s, a.Token, map[string]any{"label": "on Q2", "date": base.Format(time.RFC3339), "color": "amber", "scope": "query", "queryId": q2})

		// Default page: 20, newest first, with the total.
		l := listAnnotations(t, s, a.Token, nil)
		if l.Page != 1 || l.PageSize != 20 || l.Total != 46 || len(l.Items) != 20 {
			t.Fatalf("first page: page %d size %d total %d items %d", l.Page, l.PageSize, l.Total, len(l.Items))
		}
		var got []int64
		for page := 1; page <= 3; page++ {
			l := listAnnotations(t, s, a.Token, url.Values{"page": {strconv.Itoa(page)}})
			if l.Total != 46 || l.Page != page || (page < 3 && len(l.Items) != 20) || (page == 3 && len(l.Items) != 6) {
				t.Errorf("page %d: %d items, total %d", page, len(l.Items), l.Total)
			}
			for _, it := range l.Items {
				if it.Scope != "workspace" {
					t.Errorf("a %s annotation in the workspace list: %+v", it.Scope, it)
				}
				got = append(got, it.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("paged ids\n%v\nwant\n%v", got, want)
		}
		if l := listAnnotations(t, s, a.Token, url.Values{"page": {"4"}}); len(l.Items) != 0 || l.Total != 46 {
			t.Errorf("past the end: %+v", l)
		}
		if raw := annCall(t, s, a.Token, "GET", "/api/v1/annotations?page=4", nil); !strings.Contains(string(raw.Body), `"items":[]`) {
			t.Errorf("past the end items is not []: %s", raw.Body)
		}
		if l := listAnnotations(t, s, a.Token, url.Values{"pageSize": {"7"}, "page": {"2"}}); l.PageSize != 7 || len(l.Items) != 7 || l.Items[0].ID != want[7] {
			t.Errorf("pageSize 7 page 2: %+v", l)
		}

		// The scope rule: with queryId, that query's annotations join the
		// workspace's, in date order; another query's never do.
		withQ1 := slices.Clone(want)
		i := slices.Index(withQ1, byDate[20])
		withQ1 = slices.Insert(withQ1, i-1, onQ1) // 20:30 sorts before the two 20:00 ones
		if got := allAnnotationIDs(t, s, a.Token, url.Values{"queryId": {strconv.FormatInt(q1, 10)}}); !slices.Equal(got, withQ1) {
			t.Errorf("with queryId Q1\n%v\nwant\n%v", got, withQ1)
		}
		if l := listAnnotations(t, s, a.Token, url.Values{"queryId": {strconv.FormatInt(q2, 10)}}); l.Total != 47 {
			t.Errorf("with queryId Q2: total %d, want 47", l.Total)
		}
		if l := listAnnotations(t, s, a.Token, url.Values{"queryId": {"999999"}}); l.Total != 46 {
			t.Errorf("with an unknown queryId: total %d, want the workspace's 46", l.Total)
		}
		// Every product of the workspace sees the same list.
		if got := allAnnotationIDs(t, s, b.Token, nil); !slices.Equal(got, want) {
			t.Errorf("product B's list differs from A's")
		}

		// from and to bound the date, inclusively; a day means all of it.
		if got := allAnnotationIDs(t, s, a.Token, url.Values{"from": {base.Add(40 * time.Hour).Format(time.RFC3339)}, "to": {base.Add(43 * time.Hour).Format(time.RFC3339)}}); !slices.Equal(got, want[1:5]) {
			t.Errorf("from 40h to 43h: %v, want %v", got, want[1:5])
		}
		if got := allAnnotationIDs(t, s, a.Token, url.Values{"to": {"2026-11-01"}}); !slices.Equal(got, want[34:]) {
			t.Errorf("to the first day: %v, want the 12 of that day %v", got, want[34:])
		}
		if got := allAnnotationIDs(t, s, a.Token, url.Values{"from": {"2026-11-02"}}); !slices.Equal(got, want[:34]) {
			t.Errorf("from the second day: %d annotations, want 34", len(got))
		}

		// A saved query's deletion takes its annotations with it.
		if res := annCall(t, s, a.Token, "DELETE", fmt.Sprintf("/api/v1/queries/%d", q1), nil); res.Status != 204 {
			t.Fatalf("deleting Q1: %d %s", res.Status, res.Body)
		}
		if got := allAnnotationIDs(t, s, a.Token, url.Values{"queryId": {strconv.FormatInt(q1, 10)}}); !slices.Equal(got, want) {
			t.Errorf("Q1's annotation outlived Q1")
		}
		wantError(t, annCall(t, s, a.Token, "DELETE", fmt.Sprintf("/api/v1/annotations/%d", onQ1), nil), 404, "annotation_not_found", "")

		// Deleting one: 204, then 404; the list shrinks at once.
		if res := annCall(t, s, b.Token, "DELETE", fmt.Sprintf("/api/v1/annotations/%d", want[0]), nil); res.Status != 204 || len(res.Body) != 0 {
			t.Errorf("delete: %d %q", res.Status, res.Body)
		}
		wantError(t, annCall(t, s, a.Token, "DELETE", fmt.Sprintf("/api/v1/annotations/%d", want[0]), nil), 404, "annotation_not_found", "")
		for _, bad := range []string{"0", "-3", "abc", "999999999"} {
			wantError(t, annCall(t, s, a.Token, "DELETE", "/api/v1/annotations/"+bad, nil), 404, "annotation_not_found", "")
		}
		if l := listAnnotations(t, s, a.Token, nil); l.Total != 45 || l.Items[0].ID != want[1] {
			t.Errorf("after deleting the newest: total %d, first %d", l.Total, l.Items[0].ID)
		}
		// Deleting many, repeats and unknown ids included.
		res := annCall(t, s, a.Token, "POST", "/api/v1/annotations/bulk-delete", map[string]any{"ids": []int64{want[1], want[2], want[2], want[0], 999999}})
		if res.Status != 200 || res.JSON(t)["deleted"] != float64(2) {
			t.Errorf("bulk delete: %d %s", res.Status, res.Body)
		}
		if l := listAnnotations(t, s, a.Token, nil); l.Total != 43 {
			t.Errorf("after bulk delete: total %d, want 43", l.Total)
		}
	})

	t.Run("WorkspaceIsolation", func(t *testing.T) {
		mine := allAnnotationIDs(t, s, a.Token, nil)
		theirs := createAnnotation(t, s, second.Token, newAnnotation("Second's marker", base.Add(100*time.Hour)))
		theirsQ := createAnnotation(t, s, second.Live, map[string]any{"label": "Second's query marker",
			"date": base.Add(101 * time.Hour).Format(time.RFC3339), "color": "slate", "scope": "query", "queryId": otherQuery})
		if theirs.CreatedBy != "token "+second.Token[:11]+"…" || theirsQ.CreatedBy != "key "+second.Live[:12]+"…" {
			t.Errorf("createdBy %q and %q", theirs.CreatedBy, theirsQ.CreatedBy)
		}

		// Workspace one never reads them: not in the list, not with their
		// query's id, not in the export.
		for _, q := range []url.Values{nil, {"queryId": {strconv.FormatInt(otherQuery, 10)}}} {
			got := allAnnotationIDs(t, s, a.Token, q)
			if slices.Contains(got, theirs.ID) || slices.Contains(got, theirsQ.ID) {
				t.Errorf("workspace one lists workspace two's annotations (query %v)", q)
			}
			csvBody := annCall(t, s, a.Token, "GET", "/api/v1/annotations/export.csv?"+q.Encode(), nil).Body
			if bytes.Contains(csvBody, []byte("Second's")) {
				t.Errorf("workspace one exports workspace two's annotations (query %v)", q)
			}
		}
		// ...and never deletes them, one by one or in bulk.
		wantError(t, annCall(t, s, a.Token, "DELETE", fmt.Sprintf("/api/v1/annotations/%d", theirs.ID), nil), 404, "annotation_not_found", "")
		res := annCall(t, s, b.Token, "POST", "/api/v1/annotations/bulk-delete", map[string]any{"ids": []int64{theirs.ID, theirsQ.ID, mine[0], mine[1]}})
		if res.Status != 200 || res.JSON(t)["deleted"] != float64(2) {
			t.Errorf("bulk delete across workspaces: %d %s; want only the caller's 2", res.Status, res.Body)
		}
		got := allAnnotationIDs(t, s, second.Token, url.Values{"queryId": {strconv.FormatInt(otherQuery, 10)}})
		if !slices.Equal(got, []int64{theirsQ.ID, theirs.ID}) {
			t.Errorf("workspace two after workspace one's deletes: %v, want %v", got, []int64{theirsQ.ID, theirs.ID})
		}
		// Workspace two sees only its own.
		if l := listAnnotations(t, s, second.Token, nil); l.Total != 1 || l.Items[0].ID != theirs.ID {
			t.Errorf("workspace two lists %+v", l)
		}
		// Workspace one's remaining annotations are intact, bar the two.
		if got := allAnnotationIDs(t, s, a.Token, nil); !slices.Equal(got, mine[2:]) {
			t.Errorf("workspace one after the bulk delete: %d annotations, want %d", len(got), len(mine)-2)
		}
		// And workspace two cannot delete workspace one's.
		wantError(t, annCall(t, s, second.Token, "DELETE", fmt.Sprintf("/api/v1/annotations/%d", mine[2]), nil), 404, "annotation_not_found", "")
	})

	t.Run("CSVExport", func(t *testing.T) {
		q := saveQuery(t, s, third.Token, "Third's query")
		type row struct{ label, description string }
		rows := []row{ // oldest first
			{"=HYPERLINK(\"http://evil.example\",\"click\")", "=1+2"},
			{"+49 30 1234", "-5% signups"},
			{"@SUM(A1:A9)", "\t=cmd"},
			{"Comma, \"quotes\" and more", "two\r\nlines, \"quoted\""},
			{"Déploiement 🚀 日本", ""},
			{"plain", "a-b=c"},
		}
		var created []annotation
		for i, r := range rows {
			body := newAnnotation(r.label, base.Add(time.Duration(i)*time.Hour))
			body["description"] = r.description
			cred := third.Token
			if i%2 == 1 {
				cred = third.Live
			}
			created = append(created, createAnnotation(t, s, cred, body))
		}
		createAnnotation(t, s, third.Token, map[string]any{"label": "-query only", "date": base.Add(-time.Hour).Format(time.RFC3339),
			"color": "amber", "scope": "query", "queryId": q})

		before := time.Now().UTC().Format(time.DateOnly)
		res := annCall(t, s, third.Token, "GET", "/api/v1/annotations/export.csv", nil)
		after := time.Now().UTC().Format(time.DateOnly)
		if res.Status != 200 {
			t.Fatalf("export: %d %s", res.Status, res.Body)
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		cd := res.Header.Get("Content-Disposition")
		if cd != `attachment; filename="strata-annotations-`+before+`.csv"` && cd != `attachment; filename="strata-annotations-`+after+`.csv"` {
			t.Errorf("Content-Disposition %q, want today's (%s) file name", cd, before)
		}
		if bytes.HasPrefix(res.Body, []byte("\xef\xbb\xbf")) {
			t.Error("the export starts with a byte-order mark")
		}
		// RFC 4180 on the wire: CRLF line ends, quoted fields with doubled quotes.
		if !bytes.HasPrefix(res.Body, []byte("date,label,description,color,scope,created_by,created_at\r\n")) {
			t.Errorf("header row: %q", bytes.SplitN(res.Body, []byte("\n"), 2)[0])
		}
		for _, want := range []string{
			`"'=HYPERLINK(""http://evil.example"",""click"")"`,
			`"Comma, ""quotes"" and more"`,
			`"two` + "\r\n" + `lines, ""quoted"""`,
			"Déploiement 🚀 日本",
		} {
			if !bytes.Contains(res.Body, []byte(want)) {
				t.Errorf("the export lacks %q:\n%s", want, res.Body)
			}
		}
		records, err := csv.NewReader(bytes.NewReader(res.Body)).ReadAll()
		if err != nil {
			t.Fatalf("the export is not valid CSV: %v", err)
		}
		escaped := func(v string) string {
			if v != "" && strings.ContainsAny(v[:1], "=+-@\t\r") {
				return "'" + v
			}
			return v
		}
		want := [][]string{{"date", "label", "description", "color", "scope", "created_by", "created_at"}}
		for i := len(created) - 1; i >= 0; i-- { // newest first
			c := created[i]
			want = append(want, []string{c.Date.Format(time.RFC3339Nano), escaped(rows[i].label), escaped(strings.ReplaceAll(rows[i].description, "\r\n", "\n")),
				"emerald", "workspace", c.CreatedBy, c.CreatedAt.Format(time.RFC3339Nano)})
		}
		if len(records) != len(want) {
			t.Fatalf("%d records, want %d:\n%s", len(records), len(want), res.Body)
		}
		for i := range want {
			if !slices.Equal(records[i], want[i]) {
				t.Errorf("record %d\n%q\nwant\n%q", i, records[i], want[i])
			}
		}
		if records[1][1] != "plain" || records[6][1] != `'=HYPERLINK("http://evil.example","click")` || records[5][2] != "'-5% signups" ||
			records[4][1] != "'@SUM(A1:A9)" || records[5][1] != "'+49 30 1234" || records[4][2] != "'\t=cmd" || records[1][2] != "a-b=c" {
			t.Errorf("formula cells not escaped as expected: %q", records)
		}
		if !strings.HasPrefix(records[1][5], "key st_live_") || !strings.HasPrefix(records[2][5], "token st_tok_") {
			t.Errorf("created_by cells %q, %q", records[1][5], records[2][5])
		}

		// The same scope rule as the list: the query's annotation only with
		// its queryId, and the date bounds apply.
		withQ := annCall(t, s, third.Token, "GET", "/api/v1/annotations/export.csv?queryId="+strconv.FormatInt(q, 10), nil)
		recs, _ := csv.NewReader(bytes.NewReader(withQ.Body)).ReadAll()
		if len(recs) != len(want)+1 || recs[len(recs)-1][1] != "'-query only" || recs[len(recs)-1][4] != "query" {
			t.Errorf("export with queryId: %q", recs)
		}
		bounded := annCall(t, s, third.Token, "GET", "/api/v1/annotations/export.csv?from="+url.QueryEscape(base.Add(4*time.Hour).Format(time.RFC3339)), nil)
		if recs, _ := csv.NewReader(bytes.NewReader(bounded.Body)).ReadAll(); len(recs) != 3 {
			t.Errorf("export from the fifth annotation: %d records, want header and 2", len(recs))
		}
		// An empty export is the header row alone.
		empty := annCall(t, s, third.Token, "GET", "/api/v1/annotations/export.csv?to=1999-01-01", nil)
		if string(empty.Body) != "date,label,description,color,scope,created_by,created_at\r\n" {
			t.Errorf("empty export %q", empty.Body)
		}
	})
}

// TestAnnotationRateLimit starts a server with a low per-workspace write
// limit, 30 a minute: the workspace's writes (creates, deletes and bulk
// deletes, from any of its products) share it, each kind is refused with
// 429 and Retry-After once it is spent, reads do not use it, and another
// workspace has its own.
func TestAnnotationRateLimit(t *testing.T) {
	dir := t.TempDir()
	other := seedWorkspaces(t, dir, "Other")[0]
	s := startServer(t, dir, "--annotation-rate-limit", "30")
	a := newTenant(t, s, "A")
	b := newTenant(t, s, "B")
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

	// Write in turn (create, delete, bulk delete) until each kind has been
	// refused once. The bucket refills while the loop runs (one write
	// every 2 seconds), so the admitted count may exceed 30 by that much.
	kinds := []string{"create", "delete", "bulk"}
	refused := map[string]response{}
	var live []int64 // annotations created and not deleted
	admitted := 0
	start := time.Now()
	for i := 0; len(refused) < len(kinds) && i < 300; i++ {
		kind := kinds[i%len(kinds)]
		cred := a.Token
		if i%2 == 1 {
			cred = b.Token
			if kind == "create" { // a key may create, not delete
				cred = b.Live
			}
		}
		var res response
		switch {
		case kind == "create":
			res = annCall(t, s, cred, "POST", "/api/v1/annotations", newAnnotation(fmt.Sprint("n", i), at))
		case kind == "delete" && len(live) > 0:
			res = annCall(t, s, cred, "DELETE", fmt.Sprintf("/api/v1/annotations/%d", live[0]), nil)
		case kind == "delete":
			res = annCall(t, s, cred, "DELETE", "/api/v1/annotations/999999", nil)
		default:
			res = annCall(t, s, cred, "POST", "/api/v1/annotations/bulk-delete", map[string]any{"ids": append([]int64{999999}, live[min(1, len(live)):min(2, len(live))]...)})
		}
		if res.Status == 429 {
			if _, seen := refused[kind]; !seen {
				refused[kind] = res
			}
			continue
		}
		admitted++
		switch {
		case kind == "create" && res.Status == 201:
			var an annotation
			json.Unmarshal(res.Body, &an)
			live = append(live, an.ID)
		case kind == "delete" && res.Status == 204:
			live = live[1:]
		case kind == "delete" && res.Status == 404, kind == "bulk" && res.Status == 200:
			if kind == "bulk" && res.JSON(t)["deleted"] == float64(1) {
				live = slices.Delete(live, 1, 2)
			}
		default:
			t.Fatalf("%s: %d %s", kind, res.Status, res.Body)
		}
	}
	elapsed := time.Since(start)
	if len(refused) < len(kinds) {
		t.Fatalf("after %d admitted writes, only %v were ever refused", admitted, refused)
	}
	if most := 30 + int(elapsed.Seconds()/2) + 1; admitted < 30 || admitted > most {
		t.Errorf("%d writes admitted in %v; want 30 to %d at 30 a minute", admitted, elapsed, most)
	}
	for kind, res := range refused {
		wantError(t, res, 429, "rate_limited", "")
		if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 2 {
			t.Errorf("%s: Retry-After %q, want 1 or 2 seconds at 30 a minute", kind, res.Header.Get("Retry-After"))
		}
	}
	// Refused writes changed nothing, reads are not limited, and another
	// workspace has a budget of its own.
	if l := listAnnotations(t, s, a.Token, nil); l.Total != len(live) {
		t.Errorf("total %d, want the %d admitted and not deleted", l.Total, len(live))
	}
	if res := annCall(t, s, b.Token, "GET", "/api/v1/annotations/export.csv", nil); res.Status != 200 {
		t.Errorf("export while limited: %d", res.Status)
	}
	createAnnotation(t, s, other.Token, newAnnotation("another workspace", at))
	// After Retry-After the workspace may write again.
	wait, _ := strconv.Atoi(refused["create"].Header.Get("Retry-After"))
	time.Sleep(time.Duration(wait)*time.Second + 100*time.Millisecond)
	createAnnotation(t, s, a.Token, newAnnotation("after waiting", at))
}

// TestAnnotationBudgetPerCredential checks that annotation writes are
// counted per credential as well as per workspace: a token that spends
// the budget is refused (429 with Retry-After), the workspace's other keys
// and tokens share the workspace's budget and are refused too, but the
// owner's dashboard session, whose writes only its own budget counts,
// still creates and deletes; and the session has a budget of its own.
func TestAnnotationBudgetPerCredential(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--annotation-rate-limit", "5")
	pid := strconv.FormatInt(s.ProductID, 10)
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", pid))
	other := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", pid))
	owner := setupOwner(t, s)
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

	for i := range 5 {
		createAnnotation(t, s, token, newAnnotation(fmt.Sprint("by token ", i), at))
	}
	res := annCall(t, s, token, "POST", "/api/v1/annotations", newAnnotation("one too many", at))
	wantError(t, res, 429, "rate_limited", "")
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", res.Header.Get("Retry-After"))
	}
	// The workspace's keys and tokens share its budget.
	wantError(t, annCall(t, s, other, "POST", "/api/v1/annotations", newAnnotation("another token", at)), 429, "rate_limited", "")
	wantError(t, annCall(t, s, s.BootstrapKey, "POST", "/api/v1/annotations", newAnnotation("a key", at)), 429, "rate_limited", "")

	// The owner is not blocked by them.
	path := "/api/v1/annotations?product=" + pid
	res = owner.do(t, "POST", path, newAnnotation("by the owner", at))
	if res.Status != 201 {
		t.Fatalf("the owner's session after a token spent the workspace's budget: %d %s", res.Status, res.Body)
	}
	var mine annotation
	json.Unmarshal(res.Body, &mine)
	if res := owner.do(t, "DELETE", fmt.Sprintf("/api/v1/annotations/%d?product=%s", mine.ID, pid), nil); res.Status != 204 {
		t.Errorf("the owner's delete: %d %s", res.Status, res.Body)
	}
	// The session's own budget: three more writes make five, the sixth is refused.
	for i := range 3 {
		if res := owner.do(t, "POST", path, newAnnotation(fmt.Sprint("owner ", i), at)); res.Status != 201 {
			t.Fatalf("owner write %d: %d %s", i+3, res.Status, res.Body)
		}
	}
	res = owner.do(t, "POST", path, newAnnotation("owner, one too many", at))
	wantError(t, res, 429, "rate_limited", "")
	if res.Header.Get("Retry-After") == "" {
		t.Error("the session's 429 has no Retry-After")
	}
}
