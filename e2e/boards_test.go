package e2e

import (
	"strings"
	"testing"
)

// TestBoards drives dashboards on the real binary with two products:
// a board's tile runs its saved query with the board's filters ANDed and
// the board's range replacing the one on screen; every route is scoped to
// the product (B's id finds none of A's boards, tiles or saved queries);
// the layout is replaced whole or refused; deleting a saved query removes
// its tiles.
func TestBoards(t *testing.T) {
	f := newShareFixture(t, "--share-rate-limit", "100000")
	a, b := "?product="+jsonNumber(f.a), "?product="+jsonNumber(f.b)
	saved := func(q string, name string, def any) int64 {
		r := f.owner.do(t, "POST", "/api/v1/queries"+q, map[string]any{"kind": "trend", "name": name, "definition": def})
		if r.Status != 201 {
			t.Fatalf("save: %d %s", r.Status, r.Body)
		}
		return int64(r.JSON(t)["id"].(float64))
	}
	qa := saved(a, "Page views", pageviewTrend)
	qa2 := saved(a, "Page views again", pageviewTrend)
	qb := saved(b, "B's page views", pageviewTrend)

	r := f.owner.do(t, "POST", "/api/v1/boards"+a, map[string]any{"name": " Growth ", "description": "weekly"})
	if r.Status != 201 || r.JSON(t)["name"] != "Growth" {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	board := jsonNumber(int64(r.JSON(t)["id"].(float64)))
	for _, bad := range []map[string]any{{"name": ""}, {"name": "x", "dateFrom": "2026-01-01"}, {"name": "x", "filters": []map[string]any{{"property": "nope", "operator": "eq", "value": 1}}}} {
		if r := f.owner.do(t, "POST", "/api/v1/boards"+a, bad); r.Status != 400 {
			t.Errorf("create %v: %d %s, want 400", bad, r.Status, r.Body)
		}
	}
	tile := func(q string, body map[string]any) response {
		return f.owner.do(t, "POST", "/api/v1/boards/"+board+"/tiles"+q, body)
	}
	t1 := tile(a, map[string]any{"queryId": qa, "width": 4, "height": 2})
	if t1.Status != 201 {
		t.Fatalf("add a tile: %d %s", t1.Status, t1.Body)
	}
	tile1 := jsonNumber(int64(t1.JSON(t)["id"].(float64)))
	t2 := tile(a, map[string]any{"card": "top_pages"})
	tile2 := jsonNumber(int64(t2.JSON(t)["id"].(float64)))
	t3 := tile(a, map[string]any{"queryId": qa2})
	tile3 := jsonNumber(int64(t3.JSON(t)["id"].(float64)))
	if r := tile(a, map[string]any{"queryId": qb}); r.Status != 404 || r.ErrorCode(t) != "query_not_found" {
		t.Errorf("a tile of B's saved query: %d %s", r.Status, r.Body)
	}
	if r := tile(a, map[string]any{"card": "secrets"}); r.Status != 400 {
		t.Errorf("an unknown card: %d %s", r.Status, r.Body)
	}
	if r := tile(a, map[string]any{"queryId": qa, "width": 5}); r.Status != 400 {
		t.Errorf("a tile 5 wide: %d %s", r.Status, r.Body)
	}

	// Tenant isolation: B's id reaches none of A's board.
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/boards/" + board},
		{"PUT", "/api/v1/boards/" + board},
		{"DELETE", "/api/v1/boards/" + board},
		{"POST", "/api/v1/boards/" + board + "/tiles"},
		{"DELETE", "/api/v1/boards/" + board + "/tiles/" + tile1},
		{"POST", "/api/v1/boards/" + board + "/tiles/" + tile1 + "/run"},
	} {
		var body any
		switch {
		case c.method == "PUT":
			body = map[string]any{"name": "x"}
		case strings.HasSuffix(c.path, "/tiles"):
			body = map[string]any{"queryId": qb}
		}
		r := f.owner.do(t, c.method, c.path+b, body)
		if r.Status != 404 || r.ErrorCode(t) != "board_not_found" {
			t.Errorf("%s %s through B: %d %s, want 404 board_not_found", c.method, c.path, r.Status, r.Body)
		}
	}
	if r := f.owner.do(t, "GET", "/api/v1/boards"+b, nil); r.Status != 200 || strings.Contains(string(r.Body), "Growth") {
		t.Errorf("B's boards: %d %s", r.Status, r.Body)
	}

	// A tile runs its query; the board's filters are ANDed with it, and
	// the board's range replaces the one on screen.
	run := func(tileID, q string) response {
		return f.owner.do(t, "POST", "/api/v1/boards/"+board+"/tiles/"+tileID+"/run"+q, nil)
	}
	if n := total(t, run(tile1, a)); n != 3 {
		t.Errorf("the tile: %d page views, want 3", n)
	}
	if r := run(tile2, a); r.Status != 400 || r.ErrorCode(t) != "card_tile" {
		t.Errorf("running a card: %d %s", r.Status, r.Body)
	}
	put := func(body map[string]any) response {
		return f.owner.do(t, "PUT", "/api/v1/boards/"+board+a, body)
	}
	if r := put(map[string]any{"name": "Growth", "filters": []map[string]any{{"property": "path", "operator": "eq", "value": "/page1"}}}); r.Status != 200 {
		t.Fatalf("set the filters: %d %s", r.Status, r.Body)
	}
	if n := total(t, run(tile1, a)); n != 1 {
		t.Errorf("the tile with the board's filter: %d page views, want 1", n)
	}
	if r := put(map[string]any{"name": "Growth", "dateFrom": "2020-01-01", "dateTo": "2020-01-31"}); r.Status != 200 {
		t.Fatalf("set the range: %d %s", r.Status, r.Body)
	}
	if n := total(t, run(tile1, a+"&dateFrom=2026-01-01")); n != 0 {
		t.Errorf("the tile over the board's range in 2020: %d page views, want 0", n)
	}
	// A relative range follows the calendar: the last 7 days hold today's
	// page views whatever the range on screen; 400 to 300 days ago, none.
	if r := put(map[string]any{"name": "Growth", "dateFrom": "-6d", "dateTo": "-0d"}); r.Status != 200 || r.JSON(t)["dateFrom"] != "-6d" || r.JSON(t)["dateTo"] != "-0d" {
		t.Fatalf("set a relative range: %d %s", r.Status, r.Body)
	}
	if n := total(t, run(tile1, a+"&dateFrom=2020-01-01&dateTo=2020-01-02")); n != 3 {
		t.Errorf("the tile over the last 7 days: %d page views, want 3", n)
	}
	if r := put(map[string]any{"name": "Growth", "dateFrom": "-400d", "dateTo": "-300d"}); r.Status != 200 {
		t.Fatalf("set a relative range: %d %s", r.Status, r.Body)
	}
	if n := total(t, run(tile1, a)); n != 0 {
		t.Errorf("the tile over 400 to 300 days ago: %d page views, want 0", n)
	}
	for _, bad := range [][2]string{{"-6d", "2026-11-29"}, {"2026-11-01", "-0d"}, {"-0d", "-6d"}, {"-9999d", "-0d"}, {"-6", "-0d"}} {
		if r := put(map[string]any{"name": "Growth", "dateFrom": bad[0], "dateTo": bad[1]}); r.Status != 400 || r.ErrorCode(t) != "invalid_request" {
			t.Errorf("the range %v: %d %s", bad, r.Status, r.Body)
		}
	}
	if r := put(map[string]any{"name": "Growth"}); r.Status != 200 {
		t.Fatal(r.Status)
	}

	// The layout: reordered and resized whole, or refused.
	layout := []map[string]any{{"id": mustNumber(tile3), "width": 1, "height": 1}, {"id": mustNumber(tile1), "width": 2, "height": 2}, {"id": mustNumber(tile2), "width": 3}}
	r = put(map[string]any{"name": "Growth", "tiles": layout})
	tiles, _ := r.JSON(t)["tiles"].([]any)
	if r.Status != 200 || len(tiles) != 3 || jsonNumber(int64(tiles[0].(map[string]any)["id"].(float64))) != tile3 ||
		tiles[2].(map[string]any)["width"] != 3.0 || tiles[1].(map[string]any)["name"] != "Page views" {
		t.Fatalf("the layout: %d %s", r.Status, r.Body)
	}
	if r := put(map[string]any{"name": "Growth", "tiles": layout[:2]}); r.Status != 409 || r.ErrorCode(t) != "layout_changed" {
		t.Errorf("a layout without a tile: %d %s", r.Status, r.Body)
	}

	// Deleting a saved query removes its tile.
	if r := f.owner.do(t, "DELETE", "/api/v1/queries/"+jsonNumber(qa2)+a, nil); r.Status != 204 {
		t.Fatal(r.Status)
	}
	r = f.owner.do(t, "GET", "/api/v1/boards/"+board+a, nil)
	if r.Status != 200 || strings.Contains(string(r.Body), `"id":`+tile3+`,`) || r.JSON(t)["tileCount"] != 2.0 {
		t.Errorf("the board after its saved query was deleted: %s", r.Body)
	}
	if r := f.owner.do(t, "DELETE", "/api/v1/boards/"+board+"/tiles/"+tile1+a, nil); r.Status != 204 {
		t.Errorf("remove a tile: %d %s", r.Status, r.Body)
	}
	if r := run(tile1, a); r.Status != 404 || r.ErrorCode(t) != "tile_not_found" {
		t.Errorf("a removed tile: %d %s", r.Status, r.Body)
	}
}

// TestBoardSharedLink checks a board's shared link: it shows its board
// and runs that board's tiles, whatever product or board the URL names,
// and reaches no other board, no saved query and no other product; the
// Overview's reads only while the board shows an Overview card; it takes
// from the link's read budget; deleting the board revokes it.
func TestBoardSharedLink(t *testing.T) {
	f := newShareFixture(t, "--share-rate-limit", "40")
	a, b := "?product="+jsonNumber(f.a), "?product="+jsonNumber(f.b)
	q := f.owner.do(t, "POST", "/api/v1/queries"+a, map[string]any{"kind": "trend", "name": "Signups", "definition": map[string]any{"series": []map[string]any{{"event": "signup"}}}})
	qa := int64(q.JSON(t)["id"].(float64))
	newBoard := func(query string, name string) string {
		r := f.owner.do(t, "POST", "/api/v1/boards"+query, map[string]any{"name": name})
		if r.Status != 201 {
			t.Fatalf("board: %d %s", r.Status, r.Body)
		}
		return jsonNumber(int64(r.JSON(t)["id"].(float64)))
	}
	board, other, boardB := newBoard(a, "Shared"), newBoard(a, "Private"), newBoard(b, "B's")
	tileOf := func(board, query string, body map[string]any) string {
		r := f.owner.do(t, "POST", "/api/v1/boards/"+board+"/tiles"+query, body)
		if r.Status != 201 {
			t.Fatalf("tile: %d %s", r.Status, r.Body)
		}
		return jsonNumber(int64(r.JSON(t)["id"].(float64)))
	}
	tile := tileOf(board, a, map[string]any{"queryId": qa})
	otherTile := tileOf(other, a, map[string]any{"queryId": qa})

	link := func(p int64, boardID string) response {
		return f.owner.do(t, "POST", "/api/v1/products/"+jsonNumber(p)+"/shared-links", map[string]any{"name": "Board link", "boardId": mustNumber(boardID)})
	}
	if r := link(f.b, board); r.Status != 404 || r.ErrorCode(t) != "board_not_found" {
		t.Errorf("a link of B to A's board: %d %s", r.Status, r.Body)
	}
	r := link(f.a, board)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	secret := r.JSON(t)["secret"].(string)
	if m := r.JSON(t)["link"].(map[string]any); m["boardId"] != mustNumberF(board) {
		t.Errorf("the link: %v", m)
	}
	if r := f.share(t, "GET", secret, "/api/v1/share", nil, ""); r.Status != 200 || r.JSON(t)["boardId"] != mustNumberF(board) {
		t.Errorf("info: %d %s", r.Status, r.Body)
	}
	if r := f.share(t, "GET", secret, "/api/v1/boards/"+board+b, nil, ""); r.Status != 200 || r.JSON(t)["name"] != "Shared" {
		t.Errorf("the board through its link: %d %s", r.Status, r.Body)
	}
	// The tile runs its query as saved: the board's owner shared it.
	if n := total(t, f.share(t, "POST", secret, "/api/v1/boards/"+board+"/tiles/"+tile+"/run", nil, "")); n != 1 {
		t.Errorf("the tile through the link: %d signups, want 1", n)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/boards/" + other},
		{"GET", "/api/v1/boards/" + boardB},
		{"GET", "/api/v1/boards"},
		{"POST", "/api/v1/boards/" + other + "/tiles/" + otherTile + "/run"},
		{"POST", "/api/v1/boards/" + board + "/tiles/" + otherTile + "/run/x"},
		{"POST", "/api/v1/queries/" + jsonNumber(qa) + "/run"},
		{"GET", "/api/v1/queries"},
		{"PUT", "/api/v1/boards/" + board},
		{"DELETE", "/api/v1/boards/" + board + "/tiles/" + tile},
		// The Overview's reads, while the board shows no Overview card.
		{"POST", "/api/v1/query/trend"},
	} {
		if code, body := rawDo(t, c.method, f.s.URL+"/share/"+secret+c.path, map[string]string{"Origin": f.s.URL, "Content-Type": "application/json"}); code != 403 || !strings.Contains(body, "not_shared") {
			t.Errorf("%s %s through the board's link: %d %s, want 403 not_shared", c.method, c.path, code, body)
		}
	}
	// Another board's tile through this board's path: not found.
	if r := f.share(t, "POST", secret, "/api/v1/boards/"+board+"/tiles/"+otherTile+"/run", nil, ""); r.Status != 404 || r.ErrorCode(t) != "tile_not_found" {
		t.Errorf("another board's tile: %d %s", r.Status, r.Body)
	}
	// With an Overview card on the board, the Overview's reads, under their checks.
	tileOf(board, a, map[string]any{"card": "top_pages"})
	if n := total(t, f.share(t, "POST", secret, "/api/v1/query/trend", pageviewTrend, "")); n != 3 {
		t.Errorf("the Overview's trend with a card: %d, want 3", n)
	}
	if r := f.share(t, "POST", secret, "/api/v1/query/trend", map[string]any{"series": []map[string]any{{"event": "signup"}}}, ""); r.Status != 403 {
		t.Errorf("a custom event through the Overview's route: %d %s", r.Status, r.Body)
	}
	// An Overview link does not reach boards.
	overview := f.create(t, f.a, "Overview", "")
	if code, body := rawDo(t, "GET", f.s.URL+"/share/"+overview+"/api/v1/boards/"+board, nil); code != 403 {
		t.Errorf("a board through an Overview link: %d %s", code, body)
	}
	// The link's read budget (40 a minute, some spent above).
	limited := false
	for range 45 {
		if r := f.share(t, "GET", secret, "/api/v1/boards/"+board, nil, ""); r.Status == 429 {
			limited = r.ErrorCode(t) == "rate_limited"
			break
		}
	}
	if !limited {
		t.Error("the board's link was never rate limited")
	}
	// Deleting the board revokes its link.
	if r := f.owner.do(t, "DELETE", "/api/v1/boards/"+board+a, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := f.owner.do(t, "GET", "/api/v1/products/"+jsonNumber(f.a)+"/shared-links", nil); strings.Contains(string(r.Body), "Board link") {
		t.Errorf("the deleted board's link is listed: %s", r.Body)
	}
}

func mustNumber(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}

func mustNumberF(s string) float64 { return float64(mustNumber(s)) }
