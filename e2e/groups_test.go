package e2e

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestGroups drives groups over HTTP on the real binary: the SDK's
// POST /api/v1/groups/{type}/{key} (CORS-open, the API key in the header
// or the query, properties merged, every rule a 400 naming its field, the
// 64 KiB body limit, 401/403 for bad keys), the dashboard's list with its
// tenant isolation, events tagged with $groups (a bad one rejected per
// event), and a trend and a funnel counting companies where counting
// users gives other answers.
func TestGroups(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	groupURL := func(typ, key, apiKey string) string {
		u := s.URL + "/api/v1/groups/" + typ + "/" + url.PathEscape(key)
		if apiKey != "" {
			u += "?api_key=" + apiKey
		}
		return u
	}
	post := func(u string, body string, h map[string]string) response {
		hh := map[string]string{"Content-Type": "application/json", "Origin": "https://shop.example"}
		for k, v := range h {
			hh[k] = v
		}
		return do(t, "POST", u, []byte(body), hh)
	}

	res := post(groupURL("company", "acme/eu ü", a.Live), `{"properties":{"name":"Acme","plan":"free"}}`, nil)
	if res.Status != 202 || strings.TrimSpace(string(res.Body)) != "{}" || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("upsert: %d %s %v", res.Status, res.Body, res.Header)
	}
	if res := post(groupURL("company", "acme/eu ü", ""), `{"properties":{"plan":"pro"}}`, map[string]string{"X-API-Key": a.Live}); res.Status != 202 {
		t.Fatalf("upsert with X-API-Key: %d %s", res.Status, res.Body)
	}
	if res := post(groupURL("team", "data", a.Live), ``, nil); res.Status != 202 {
		t.Errorf("upsert without a body: %d %s", res.Status, res.Body)
	}
	if res := post(groupURL("company", "acme/eu ü", b.Live), `{"properties":{"name":"Blog's Acme"}}`, nil); res.Status != 202 {
		t.Errorf("the same group in another product: %d %s", res.Status, res.Body)
	}
	pre := do(t, "OPTIONS", groupURL("company", "acme", ""), nil, map[string]string{"Origin": "https://shop.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, x-api-key"})
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", pre.Status, pre.Header)
	}

	for _, c := range []struct {
		name, url, body string
		status          int
		code, field     string
	}{
		{"a type with a capital", groupURL("Company", "acme", a.Live), `{}`, 400, "invalid_request", "type:"},
		{"a type starting with a digit", groupURL("1co", "acme", a.Live), `{}`, 400, "invalid_request", "type:"},
		{"a 201-character key", groupURL("company", strings.Repeat("k", 201), a.Live), `{}`, 400, "invalid_request", "key:"},
		{"properties not an object", groupURL("company", "acme", a.Live), `{"properties":[1]}`, 400, "invalid_request", "properties:"},
		{"a reserved property", groupURL("company", "acme", a.Live), `{"properties":{"$is_bot":true}}`, 400, "invalid_request", "properties:"},
		{"an unknown field", groupURL("company", "acme", a.Live), `{"props":{}}`, 400, "invalid_request", "props:"},
		{"over 64 KiB", groupURL("company", "acme", a.Live), `{"properties":{"k":"` + strings.Repeat("v", 64<<10) + `"}}`, 413, "body_too_large", ""},
		{"no key", groupURL("company", "acme", ""), `{}`, 401, "", ""},
		{"an unknown key", groupURL("company", "acme", "st_live_"+strings.Repeat("x", 32)), `{}`, 401, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := post(c.url, c.body, nil)
			if res.Status != c.status || res.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Fatalf("%d %s, want %d with CORS", res.Status, res.Body, c.status)
			}
			if c.code != "" && res.ErrorCode(t) != c.code {
				t.Errorf("code %s, want %s", res.ErrorCode(t), c.code)
			}
			if msg, _ := res.JSON(t)["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, c.field) {
				t.Errorf("message %q does not name %s", msg, c.field)
			}
		})
	}

	// The dashboard's list: a token's product only; API keys refused.
	var list struct {
		Items []struct {
			Type       string         `json:"type"`
			Key        string         `json:"key"`
			Properties map[string]any `json:"properties"`
		} `json:"items"`
		Types []string `json:"types"`
	}
	res = annCall(t, s, a.Token, "GET", "/api/v1/groups?type=company", nil)
	if err := json.Unmarshal(res.Body, &list); res.Status != 200 || err != nil {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	if len(list.Items) != 1 || list.Items[0].Key != "acme/eu ü" || !reflect.DeepEqual(list.Items[0].Properties, map[string]any{"name": "Acme", "plan": "pro"}) ||
		!reflect.DeepEqual(list.Types, []string{"company", "team"}) || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("list of A: %s %v", res.Body, res.Header)
	}
	res = annCall(t, s, b.Token, "GET", "/api/v1/groups", nil)
	if err := json.Unmarshal(res.Body, &list); err != nil || len(list.Items) != 1 || list.Items[0].Properties["name"] != "Blog's Acme" {
		t.Errorf("list of B: %s", res.Body)
	}
	if res := annCall(t, s, a.Live, "GET", "/api/v1/groups", nil); res.Status != 403 {
		t.Errorf("an API key listed groups: %d %s", res.Status, res.Body)
	}
	if res := annCall(t, s, a.Token, "GET", "/api/v1/groups?type=Bad", nil); res.Status != 400 {
		t.Errorf("a bad type filter: %d %s", res.Status, res.Body)
	}

	// Events: u1 signs up and u2 of the same company invites; u3, in no
	// company, does both. By user the funnel is [2, 1] (u1 and u3 sign
	// up, u3 invites); by company [1, 1] (acme does both, by two users).
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour)
	at := func(h int) string { return day.Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	acme := map[string]any{"$groups": map[string]any{"company": "acme/eu ü"}}
	res = postEvents(t, s, a.Live,
		map[string]any{"event_name": "signup", "distinct_id": "u1", "timestamp": at(1), "properties": acme},
		map[string]any{"event_name": "invite_sent", "distinct_id": "u2", "timestamp": at(2), "properties": acme},
		map[string]any{"event_name": "signup", "distinct_id": "u3", "timestamp": at(1)},
		map[string]any{"event_name": "invite_sent", "distinct_id": "u3", "timestamp": at(2)},
		map[string]any{"event_name": "signup", "distinct_id": "u4", "timestamp": at(1), "properties": map[string]any{"$groups": "acme"}},
	)
	var ingest ingestAnswer
	if err := json.Unmarshal(res.Body, &ingest); err != nil || res.Status != 202 || ingest.Accepted != 4 ||
		len(ingest.Rejected) != 1 || ingest.Rejected[0].Index != 4 || ingest.Rejected[0].Code != "invalid_groups" {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	date := day.Format("2006-01-02")
	funnel := func(by string) []int64 {
		res := annCall(t, s, a.Token, "POST", "/api/v1/query/funnel", map[string]any{"steps": []string{"signup", "invite_sent"},
			"dateFrom": date, "dateTo": date, "aggregateBy": by})
		var f struct {
			Steps []struct {
				Count int64 `json:"count"`
			} `json:"steps"`
		}
		if err := json.Unmarshal(res.Body, &f); err != nil || res.Status != 200 {
			t.Fatalf("funnel by %q: %d %s", by, res.Status, res.Body)
		}
		var out []int64
		for _, st := range f.Steps {
			out = append(out, st.Count)
		}
		return out
	}
	if got := funnel(""); !reflect.DeepEqual(got, []int64{2, 1}) {
		t.Errorf("funnel by user = %v, want [2 1]", got)
	}
	if got := funnel("company"); !reflect.DeepEqual(got, []int64{1, 1}) {
		t.Errorf("funnel by company = %v, want [1 1]", got)
	}
	trend := func(by string) int64 {
		res := annCall(t, s, a.Token, "POST", "/api/v1/query/trend", map[string]any{"dateFrom": date, "dateTo": date, "aggregateBy": by,
			"series": []map[string]any{{"event": "signup", "math": "unique_users"}}})
		var tr struct {
			Series []struct {
				Data []struct {
					Value int64 `json:"value"`
				} `json:"data"`
			} `json:"series"`
		}
		if err := json.Unmarshal(res.Body, &tr); err != nil || res.Status != 200 || len(tr.Series) != 1 || len(tr.Series[0].Data) != 1 {
			t.Fatalf("trend by %q: %d %s", by, res.Status, res.Body)
		}
		return tr.Series[0].Data[0].Value
	}
	if got := trend(""); got != 2 {
		t.Errorf("unique users who signed up = %d, want 2", got)
	}
	if got := trend("company"); got != 1 {
		t.Errorf("unique companies that signed up = %d, want 1", got)
	}
	res = annCall(t, s, a.Token, "POST", "/api/v1/query/trend", map[string]any{"aggregateBy": "Company", "series": []map[string]any{{"event": "signup"}}})
	if res.Status != 400 || !strings.Contains(string(res.Body), "aggregateBy:") {
		t.Errorf("a bad aggregateBy: %d %s", res.Status, res.Body)
	}
}
