package flags

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// vectors are the project's shared assignment vectors, which the browser
// SDK's and the Node SDK's tests reproduce too: one copy, kept with
// the browser SDK.
type vectors struct {
	Hash []struct {
		Input  string `json:"input"`
		Murmur uint32 `json:"murmur3_32"`
	} `json:"hash"`
	Bucket []struct {
		Salt, FlagKey, DistinctID string
		Bucket                    int
	} `json:"bucket"`
	Assign []struct {
		Flag, DistinctID, Variant string
	} `json:"assign"`
	Flags []Flag `json:"flags"`
	// Targeting are users with properties and cohorts (as
	// /api/v1/config lists them: ids as keys), of flags with conditions:
	// the variant getVariant answers and what the exposure names ("" for
	// no exposure).
	Targeting []struct {
		Flag, DistinctID string
		Properties       map[string]any
		Cohorts          Cohorts
		Variant, Exposed string
	} `json:"targeting"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("../../sdk/browser/test/assignment.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Hash) == 0 || len(v.Bucket) == 0 || len(v.Assign) == 0 || len(v.Flags) == 0 || len(v.Targeting) == 0 {
		t.Fatal("the vectors file lost a section")
	}
	return v
}

func TestVectors(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.Hash {
		if got := Murmur3(c.Input); got != c.Murmur {
			t.Errorf("Murmur3(%q) = %d, want %d", c.Input, got, c.Murmur)
		}
	}
	for _, c := range v.Bucket {
		if got := Bucket(c.Salt, c.FlagKey, c.DistinctID); got != c.Bucket {
			t.Errorf("Bucket(%q, %q, %q) = %d, want %d", c.Salt, c.FlagKey, c.DistinctID, got, c.Bucket)
		}
	}
	byKey := map[string]*Flag{}
	for i := range v.Flags {
		byKey[v.Flags[i].Key] = &v.Flags[i]
	}
	variants := map[string]bool{}
	for _, c := range v.Assign {
		got, ok := Assign(byKey[c.Flag], c.DistinctID, nil, nil)
		if !ok {
			got.Variant = "control" // what getVariant answers for a flag with nothing to expose
		}
		if got.Variant != c.Variant {
			t.Errorf("Assign(%s, %q) = %q, want %q", c.Flag, c.DistinctID, got.Variant, c.Variant)
		}
		variants[got.Variant] = true
	}
	if len(variants) < 4 {
		t.Errorf("the vectors reached only the variants %v", variants)
	}
	exposed := map[string]bool{}
	withCohorts := 0
	for _, c := range v.Targeting {
		got, ok := Assign(byKey[c.Flag], c.DistinctID, c.Properties, c.Cohorts)
		e := got.Exposed()
		if !ok {
			got.Variant, e = "control", ""
		}
		if got.Variant != c.Variant || e != c.Exposed {
			t.Errorf("Assign(%s, %q, %v, %v) = %q exposing %q, want %q exposing %q", c.Flag, c.DistinctID, c.Properties, c.Cohorts, got.Variant, e, c.Variant, c.Exposed)
		}
		exposed[e] = true
		if c.Cohorts != nil {
			withCohorts++
		}
	}
	if withCohorts < 15 {
		t.Errorf("only %d targeting vectors give cohorts", withCohorts)
	}
	for _, e := range []string{"on", "control", "treatment", "holdout", "excluded", ""} {
		if !exposed[e] {
			t.Errorf("no targeting vector exposes %q", e)
		}
	}
}

// TestAssign checks the rules the vectors cannot show on their own: a
// holdout user is marked, a missing flag has nothing to expose, and a
// completed experiment's holdout no longer applies.
func TestAssign(t *testing.T) {
	if _, ok := Assign(nil, "u", nil, nil); ok {
		t.Error("a missing flag was assigned")
	}
	f := &Flag{Key: "k", Enabled: true, Rollout: 100, Variants: []Variant{{"control", 50}, {"treatment", 50}},
		Experiment: &Experiment{Status: "running", Holdout: 0.25}}
	held, arms := 0, map[string]int{}
	for i := range 4000 {
		a, _ := Assign(f, string(rune('a'+i%26))+string(rune(i)), nil, nil)
		if a.Holdout {
			held++
			if a.Variant != "control" {
				t.Fatalf("a holdout user got %q", a.Variant)
			}
			continue
		}
		arms[a.Variant]++
	}
	if held < 850 || held > 1150 {
		t.Errorf("%d of 4000 users held out, want about 1000", held)
	}
	if arms["control"] < 1300 || arms["treatment"] < 1300 {
		t.Errorf("arms %v, want about 1500 each", arms)
	}
	f.Experiment.Status = "completed"
	for i := range 4000 {
		if a, _ := Assign(f, string(rune(i)), nil, nil); a.Holdout {
			t.Fatal("a completed experiment still holds users out")
		}
	}
}

// TestAssignExcluded checks that a user outside the rollout is marked
// excluded, gets control, and exposes "excluded"; a user inside it exposes
// the arm, and a holdout user "holdout" whatever the rollout.
func TestAssignExcluded(t *testing.T) {
	f := &Flag{Key: "half", Enabled: true, Rollout: 50, Variants: []Variant{{"control", 50}, {"treatment", 50}},
		Experiment: &Experiment{ID: 3, Status: "running", Holdout: 0.1}}
	counts := map[string]int{}
	for i := range 4000 {
		id := "user_" + strconv.Itoa(i)
		a, ok := Assign(f, id, nil, nil)
		if !ok {
			t.Fatal("an enabled flag assigned nobody")
		}
		outside := Bucket("rollout", f.Key, id) >= 5000
		held := Bucket("holdout", f.Key, id) < 1000
		switch {
		case held:
			if !a.Holdout || a.Excluded || a.Exposed() != "holdout" {
				t.Fatalf("holdout user %s: %+v exposes %q", id, a, a.Exposed())
			}
		case outside:
			if !a.Excluded || a.Variant != "control" || a.Exposed() != "excluded" {
				t.Fatalf("user %s outside the rollout: %+v exposes %q", id, a, a.Exposed())
			}
		default:
			if a.Excluded || a.Holdout || a.Exposed() != a.Variant {
				t.Fatalf("user %s inside the rollout: %+v exposes %q", id, a, a.Exposed())
			}
		}
		counts[a.Exposed()]++
	}
	// Inside the rollout the arms split evenly; control is not swollen by
	// the users outside it.
	if c, tr := counts["control"], counts["treatment"]; c < 800 || tr < 800 || c > 1000 || tr > 1000 {
		t.Errorf("exposures %v, want about 900 per arm", counts)
	}
}

// TestTargetingKeepsBuckets checks that conditions only remove users: a
// user they target gets the arm the flag without conditions gives, and
// one they do not target is excluded, never put in another arm.
func TestTargetingKeepsBuckets(t *testing.T) {
	plain := &Flag{Key: "k", Enabled: true, Rollout: 70, Variants: []Variant{{"control", 50}, {"treatment", 50}},
		Experiment: &Experiment{Status: "running", Holdout: 0.1}}
	targeted := *plain
	targeted.Conditions = []Condition{{Type: "trait", Trait: "plan", Op: "eq", Value: "pro"}}
	targetedOut := 0
	for i := range 2000 {
		id := "user_" + strconv.Itoa(i)
		props := map[string]any{"plan": "pro"}
		if i%2 == 1 {
			props["plan"] = "free"
		}
		want, _ := Assign(plain, id, nil, nil)
		got, _ := Assign(&targeted, id, props, nil)
		switch {
		case i%2 == 0 && got != want:
			t.Fatalf("targeted user %s: %+v, without conditions %+v", id, got, want)
		case i%2 == 1 && !want.Holdout && (!got.Excluded || got.Variant != "control"):
			t.Fatalf("untargeted user %s: %+v", id, got)
		case i%2 == 1 && !want.Holdout:
			targetedOut++
		}
	}
	if targetedOut < 800 {
		t.Errorf("only %d untargeted users excluded", targetedOut)
	}
}

// TestHolds checks the condition rule on what the vectors do not reach:
// integers from Go callers, an unknown operator, and a condition of a
// type not known yet.
func TestHolds(t *testing.T) {
	props := map[string]any{"n": 12, "u": uint8(7), "f": float32(0.1), "s": "x", "o": map[string]any{"a": 1}}
	if !Holds("n", "gt", "11.5", props) || !Holds("n", "eq", "12", props) || !Holds("u", "eq", "7", props) || !Holds("f", "eq", "0.1", props) {
		t.Error("a Go integer or float32 property was not read as its number")
	}
	if !Holds("o", "eq", `{"a":1}`, props) || !Holds("o", "contains", `"A"`, props) || !Holds("o", "neq", "x", props) || !Holds("o", "exists", "", props) {
		t.Error("an object property is not compared as its JSON")
	}
	if Holds("s", "matches", "x", props) {
		t.Error("an unknown operator held")
	}
	if Targeted([]Condition{{Type: "segment", Trait: "s", Op: "neq", Value: "y"}}, props, nil) {
		t.Error("a condition of an unknown type held")
	}
	if Targeted([]Condition{{Type: "cohort", CohortID: 3, Op: "equals"}}, props, Cohorts{3: true}) {
		t.Error("a cohort condition with an unknown operator held")
	}
	if !Targeted(nil, nil, nil) {
		t.Error("no conditions must target everyone")
	}
}
