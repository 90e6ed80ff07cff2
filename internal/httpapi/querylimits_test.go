package httpapi

import (
	"context"
	"testing"
	"time"

	"strata/internal/query"
)

// TestServerBusyOverHTTP checks that a query refused by admission control
// is answered 503 server_busy with Retry-After.
func TestServerBusyOverHTTP(t *testing.T) {
	d := newDash(t)
	d.setup()
	d.api.Queries.Admission = query.NewAdmission(1, 0, time.Second)
	release, err := d.api.Queries.Admission.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := d.do("POST", "/api/v1/query/trend?product=1", map[string]any{"series": []map[string]string{{"event": "a"}}}, nil)
	if r.status != 503 || r.code() != "server_busy" || r.header.Get("Retry-After") == "" {
		t.Errorf("with every slot taken and no queue: %d %v %v; want 503 server_busy with Retry-After", r.status, r.body, r.header)
	}
	release()
	if r := d.do("POST", "/api/v1/query/trend?product=1", map[string]any{"series": []map[string]string{{"event": "a"}}}, nil); r.status != 200 {
		t.Errorf("with the slot free: %d %v", r.status, r.body)
	}
}
