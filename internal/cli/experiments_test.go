package cli

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"strata/internal/analytics"
	"strata/internal/experiment"
	"strata/internal/store/duckdb"
	"strata/internal/store/postgres"
	"strata/internal/store/postgres/pgtest"
)

// seedExperiments makes dir a data directory with products 1 and 2 and, in
// product 1, one draft experiment per name, each on its own new flag (arms
// control and treatment), and returns their ids.
func seedExperiments(t *testing.T, dir string, names ...string) []int64 {
	t.Helper()
	if _, errOut, code := run(t, "products", "create", "--name", "Other", "--data", dir); code != 0 {
		t.Fatalf("products create: exit %d: %s", code, errOut)
	}
	ctx := context.Background()
	st, err := duckdb.Open(ctx, dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &experiment.Service{Store: st}
	var ids []int64
	for _, name := range names {
		e := analytics.Experiment{ProductID: 1, Name: name, PrimaryEvent: "signup", SecondaryEvents: []string{}}
		if err := svc.Create(ctx, "test", &e, nil, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	return ids
}

// TestExperimentCommands runs the flag and experiment commands on a data
// directory no server holds (the store opened directly), then through an
// admin socket: each status change and the winner go through the
// experiment service, with its rules and its errors, and are recorded as
// the CLI's.
func TestExperimentCommands(t *testing.T) {
	dir := t.TempDir()
	ids := seedExperiments(t, dir, "Direct test", "Socket test")

	cli := runIn(t, dir)
	fails := func(code int, message string, args ...string) {
		t.Helper()
		out, errOut, got := run(t, append(args, "--data", dir)...)
		if got != code || out != "" || !strings.Contains(errOut, message) {
			t.Errorf("strata %s: exit %d, stdout %q, stderr %q; want %d and %q", strings.Join(args, " "), got, out, errOut, code, message)
		}
	}
	experiments := func() map[int64]analytics.Experiment {
		t.Helper()
		var list []analytics.Experiment
		if err := json.Unmarshal([]byte(cli("experiments", "list", "--product", "1", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		out := map[int64]analytics.Experiment{}
		for _, e := range list {
			out[e.ID] = e
		}
		return out
	}

	exercise := func(how string, id int64) {
		t.Helper()
		ref := strconv.FormatInt(id, 10)
		if e := experiments()[id]; e.Status != analytics.ExperimentDraft {
			t.Fatalf("%s: experiment %d before: %+v", how, id, e)
		}
		for _, step := range []struct{ action, want string }{
			{"start", "running"}, {"pause", "paused"}, {"resume", "running"},
		} {
			out := cli("experiments", step.action, ref, "--product", "1")
			if !strings.Contains(out, "is now "+step.want) {
				t.Errorf("%s: experiments %s: %q", how, step.action, out)
			}
			if e := experiments()[id]; string(e.Status) != step.want {
				t.Errorf("%s: after %s the list says %s, want %s", how, step.action, e.Status, step.want)
			}
		}
		// The service's rules and errors, as the API gives them.
		fails(1, "A running experiment cannot start.", "experiments", "start", ref, "--product", "1")
		fails(1, "There is no experiment with this id in this product.", "experiments", "pause", ref, "--product", "2")
		fails(1, "There is no experiment with this id in this product.", "experiments", "pause", "999", "--product", "1")
		fails(1, "There is no product 99.", "experiments", "pause", ref, "--product", "99")
		fails(1, "variant: must be an arm of the flag", "experiments", "apply-winner", ref, "--product", "1", "--variant", "nope")
		if e := experiments()[id]; e.Status != analytics.ExperimentRunning {
			t.Errorf("%s: a refused change changed the experiment: %+v", how, e)
		}

		out := cli("experiments", "apply-winner", ref, "--product", "1", "--variant", "treatment")
		if !strings.Contains(out, "is now completed") || !strings.Contains(out, "treatment") {
			t.Errorf("%s: apply-winner: %q", how, out)
		}
		e := experiments()[id]
		if e.Status != analytics.ExperimentCompleted || e.Winner != "treatment" {
			t.Errorf("%s: after apply-winner: %+v", how, e)
		}
		var flags []analytics.Flag
		if err := json.Unmarshal([]byte(cli("flags", "list", "--product", "1", "--json")), &flags); err != nil {
			t.Fatal(err)
		}
		var f *analytics.Flag
		for i := range flags {
			if flags[i].ID == e.FlagID {
				f = &flags[i]
			}
		}
		if f == nil || !f.Enabled || f.Rollout != 100 || len(f.Variants) != 2 ||
			f.Variants[0].Key != "control" || f.Variants[0].Weight != 0 || f.Variants[1].Key != "treatment" || f.Variants[1].Weight != 100 {
			t.Errorf("%s: the flag after apply-winner: %+v", how, f)
		}
		table := cli("flags", "list", "--product", "1")
		if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
			!strings.Contains(table, "control=0 treatment=100") {
			t.Errorf("%s: flags list:\n%s", how, table)
		}
		table = cli("experiments", "list", "--product", "1")
		if !strings.Contains(table, "completed") || !strings.Contains(table, "treatment") {
			t.Errorf("%s: experiments list:\n%s", how, table)
		}
		if out := cli("experiments", "list", "--product", "2", "--json"); out != "[]\n" {
			t.Errorf("%s: a product without experiments: %q", how, out)
		}
	}

	exercise("directly", ids[0])
	paths := serveAdminSocket(t, dir)
	exercise("over the socket", ids[1])
	for _, p := range []string{"GET /flags", "GET /experiments", "POST /experiments/start", "POST /experiments/pause",
		"POST /experiments/resume", "POST /experiments/apply-winner", "flags changed 1"} {
		if !paths.has(p) {
			t.Errorf("%s never reached the admin socket; got %v", p, paths.list())
		}
	}
	if paths.has("flags changed 2") {
		t.Errorf("a refused change told the server product 2's flags changed: %v", paths.list())
	}
}

// TestExperimentCommandsAudit checks that a winner applied from the CLI is
// in the flag's history as the CLI's change.
func TestExperimentCommandsAudit(t *testing.T) {
	dir := t.TempDir()
	id := strconv.FormatInt(seedExperiments(t, dir, "Audited")[0], 10)
	for _, args := range [][]string{{"experiments", "start", id}, {"experiments", "apply-winner", id, "--variant", "control"}} {
		if _, errOut, code := run(t, append(args, "--product", "1", "--data", dir)...); code != 0 {
			t.Fatalf("strata %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	st, err := duckdb.Open(context.Background(), dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	changes, err := st.FlagChanges(context.Background(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Actor != "cli" || changes[1].Actor != "test" {
		t.Errorf("the flag's history: %+v; want the winner as cli's change after test's creation", changes)
	}
}

// TestExperimentUsage checks that a malformed experiment command is a
// usage error (exit 2) before the data directory is opened.
func TestExperimentUsage(t *testing.T) {
	dir := t.TempDir() + "/data"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"experiments", "start", "--product", "1"}, "needs exactly one experiment ID"},
		{[]string{"experiments", "pause", "abc", "--product", "1"}, "needs an experiment ID, a number"},
		{[]string{"experiments", "resume", "1"}, "needs --product ID"},
		{[]string{"experiments", "apply-winner", "1", "--product", "1"}, "needs --variant KEY"},
		{[]string{"experiments", "stop", "1"}, "unknown command"},
		{[]string{"flags", "list"}, "needs --product ID"},
	} {
		if _, errOut, code := run(t, append(c.args, "--data", dir)...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("strata %s: exit %d, %q; want 2 and %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	for _, line := range []string{"flags list --product ID [--json]", "experiments list --product ID [--json]",
		"experiments start|pause|resume ID --product ID", "experiments apply-winner ID --product ID --variant KEY"} {
		if !strings.Contains(usage, "  "+line) {
			t.Errorf("the usage does not list %q", line)
		}
	}
}

// TestExperimentCommandsOnPostgreSQL runs the commands with --meta on a
// real PostgreSQL, the metadata a cluster of nodes shares: the change is
// the service's there too, and the winner is cli's in the flag's history.
func TestExperimentCommandsOnPostgreSQL(t *testing.T) {
	meta := pgtest.Start(t)
	dir := t.TempDir()
	cli := runIn(t, dir)
	cli("flags", "list", "--product", "1", "--meta", meta) // sets up workspace and product 1
	ctx := context.Background()
	st, err := postgres.Open(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := analytics.Experiment{ProductID: 1, Name: "Shared", PrimaryEvent: "signup", SecondaryEvents: []string{}}
	if err := (&experiment.Service{Store: st}).Create(ctx, "test", &e, nil, nil); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(e.ID, 10)
	cli("experiments", "start", id, "--product", "1", "--meta", meta)
	if _, errOut, code := run(t, "experiments", "resume", id, "--product", "1", "--meta", meta, "--data", dir); code != 1 ||
		!strings.Contains(errOut, "A running experiment cannot resume.") {
		t.Errorf("resume of a running experiment: exit %d, %q", code, errOut)
	}
	cli("experiments", "apply-winner", id, "--product", "1", "--variant", "control", "--meta", meta)
	got, err := st.Experiment(ctx, 1, e.ID)
	if err != nil || got.Status != analytics.ExperimentCompleted || got.Winner != "control" {
		t.Errorf("the experiment in PostgreSQL: %+v %v", got, err)
	}
	changes, err := st.FlagChanges(ctx, 1, e.FlagID)
	if err != nil || len(changes) != 2 || changes[0].Actor != "cli" {
		t.Errorf("the flag's history in PostgreSQL: %+v %v", changes, err)
	}
	if out := cli("flags", "list", "--product", "1", "--meta", meta); !strings.Contains(out, "control=100 treatment=0") {
		t.Errorf("flags list --meta:\n%s", out)
	}
}
