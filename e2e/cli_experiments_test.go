package e2e

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// apiExperiment is an experiment as the API answers it.
type apiExperiment struct {
	ID          int64  `json:"id"`
	FlagID      int64  `json:"flagId"`
	Status      string `json:"status"`
	PauseReason string `json:"pauseReason"`
	Winner      string `json:"winner"`
}

// apiError is the code and message of an error body.
func apiError(t *testing.T, r response) (code, message string) {
	t.Helper()
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("error body %d %q: %v", r.Status, r.Body, err)
	}
	return body.Error.Code, body.Error.Message
}

// TestCLIExperiments drives `strata experiments` with the real binary:
// with a server running, a pause made through its admin socket is what
// GET /api/v1/experiments/{id} answers and what GET /api/v1/config serves
// at once; a winner applied from the CLI writes the flag and its history
// entry as the API's apply-winner does, with the actor cli; an unknown
// experiment and another product's are the API's error; and with the
// server stopped, the command changes the store and a restarted server
// serves the change.
func TestCLIExperiments(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")

	experiment := func(name string) apiExperiment {
		t.Helper()
		res := annCall(t, s, a.Token, "POST", "/api/v1/experiments", map[string]any{"name": name, "primaryEvent": "signup"})
		var e apiExperiment
		if res.Status != 201 || json.Unmarshal(res.Body, &e) != nil {
			t.Fatalf("create %s: %d %s", name, res.Status, res.Body)
		}
		if r := annCall(t, s, a.Token, "POST", "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10)+"/start", nil); r.Status != 200 {
			t.Fatalf("start %s: %d %s", name, r.Status, r.Body)
		}
		return e
	}
	byCLI, byAPI, later := experiment("Checkout copy"), experiment("Pricing copy"), experiment("Later")
	get := func(s *server, e apiExperiment) apiExperiment {
		t.Helper()
		res := annCall(t, s, a.Token, "GET", "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10), nil)
		var got apiExperiment
		if res.Status != 200 || json.Unmarshal(res.Body, &got) != nil {
			t.Fatalf("get experiment %d: %d %s", e.ID, res.Status, res.Body)
		}
		return got
	}
	served := func(s *server, e apiExperiment) string {
		t.Helper()
		_, list := sdkConfigFlags(t, s, a.Live, "")
		for _, f := range list {
			if f.Experiment != nil && f.Experiment.ID == e.ID {
				return f.Experiment.Status
			}
		}
		t.Fatalf("the config serves no flag with experiment %d: %+v", e.ID, list)
		return ""
	}
	id := func(e apiExperiment) string { return strconv.FormatInt(e.ID, 10) }

	// Through the socket: the configuration, read just before and so
	// cached for two seconds, serves the pause at once.
	if st := served(s, byCLI); st != "running" {
		t.Fatalf("before the pause the config serves %q", st)
	}
	out := cli(t, dir, "experiments", "pause", id(byCLI), "--product", a.ProductFlag)
	if !strings.Contains(out, "is now paused") {
		t.Errorf("experiments pause: %q", out)
	}
	if got := get(s, byCLI); got.Status != "paused" || got.PauseReason != "manual" {
		t.Errorf("after the CLI's pause the API answers %+v", got)
	}
	if st := served(s, byCLI); st != "paused" {
		t.Errorf("right after the CLI's pause the config serves %q, want paused", st)
	}

	// The same errors as the API's, for an unknown id and another
	// product's experiment; nothing changes.
	for _, c := range []struct {
		name, path, product, token, ref string
	}{
		{"an unknown id", "/api/v1/experiments/999999/resume", a.ProductFlag, a.Token, "999999"},
		{"another product's", "/api/v1/experiments/" + id(byCLI) + "/resume", b.ProductFlag, b.Token, id(byCLI)},
	} {
		code, message := apiError(t, annCall(t, s, c.token, "POST", c.path, nil))
		if code != "experiment_not_found" {
			t.Fatalf("%s: the API answers %s", c.name, code)
		}
		stdout, stderr, exit := cliResult(dir, "experiments", "resume", c.ref, "--product", c.product)
		if exit != 1 || stdout != "" || stderr != "strata: "+message+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and the API's %q", c.name, exit, stdout, stderr, message)
		}
	}
	if got := get(s, byCLI); got.Status != "paused" {
		t.Errorf("a refused resume changed the experiment: %+v", got)
	}

	// apply-winner from the CLI and from the API write the same flag and
	// the same history entry but for its actor.
	cli(t, dir, "experiments", "apply-winner", id(byCLI), "--product", a.ProductFlag, "--variant", "treatment")
	if r := annCall(t, s, a.Token, "POST", "/api/v1/experiments/"+id(byAPI)+"/apply-winner", map[string]string{"variant": "treatment"}); r.Status != 200 {
		t.Fatalf("the API's apply-winner: %d %s", r.Status, r.Body)
	}
	type change struct {
		Action  string            `json:"action"`
		Actor   string            `json:"actor"`
		Changes []json.RawMessage `json:"changes"`
	}
	winner := func(e apiExperiment) (flag, change) {
		t.Helper()
		got := get(s, e)
		if got.Status != "completed" || got.Winner != "treatment" {
			t.Errorf("experiment %d after apply-winner: %+v", e.ID, got)
		}
		var f flag
		json.Unmarshal(annCall(t, s, a.Token, "GET", "/api/v1/flags/"+strconv.FormatInt(e.FlagID, 10), nil).Body, &f)
		var trail struct {
			Items []change `json:"items"`
		}
		json.Unmarshal(annCall(t, s, a.Token, "GET", "/api/v1/flags/"+strconv.FormatInt(e.FlagID, 10)+"/changes", nil).Body, &trail)
		if len(trail.Items) != 2 {
			t.Fatalf("flag %d's history: %+v", e.FlagID, trail.Items)
		}
		return f, trail.Items[0]
	}
	fc, cc := winner(byCLI)
	fa, ca := winner(byAPI)
	if cc.Actor != "cli" || !strings.HasPrefix(ca.Actor, "token ") {
		t.Errorf("actors: the CLI's %q, the API's %q", cc.Actor, ca.Actor)
	}
	fc.ID, fc.Key, fc.Name = fa.ID, fa.Key, fa.Name
	cc.Actor = ca.Actor
	if !reflect.DeepEqual(fc, fa) || !reflect.DeepEqual(cc, ca) {
		t.Errorf("apply-winner from the CLI wrote %+v %+v; from the API %+v %+v", fc, cc, fa, ca)
	}
	if fa.Rollout != 100 || !fa.Enabled || len(fa.Variants) != 2 || fa.Variants[1].Weight != 100 {
		t.Errorf("the winner's flag: %+v", fa)
	}

	// With the server stopped the command opens the store itself; the
	// restarted server serves what it wrote.
	s.Stop()
	out = cli(t, dir, "experiments", "pause", id(later), "--product", a.ProductFlag)
	if !strings.Contains(out, "is now paused") {
		t.Errorf("experiments pause without a server: %q", out)
	}
	var list []apiExperiment
	if err := json.Unmarshal([]byte(cli(t, dir, "experiments", "list", "--product", a.ProductFlag, "--json")), &list); err != nil || len(list) != 3 {
		t.Fatalf("experiments list: %v %+v", err, list)
	}
	if list[2].ID != later.ID || list[2].Status != "paused" {
		t.Errorf("experiments list without a server: %+v", list)
	}
	s = startServer(t, dir)
	if got := get(s, later); got.Status != "paused" || got.PauseReason != "manual" {
		t.Errorf("the restarted server answers %+v", got)
	}
	if st := served(s, later); st != "paused" {
		t.Errorf("the restarted server's config serves %q", st)
	}
}
