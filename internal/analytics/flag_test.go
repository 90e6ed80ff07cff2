package analytics

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestFlagValidate(t *testing.T) {
	valid := func() Flag {
		return Flag{Key: "pricing_copy_test", Name: "Pricing copy test", Rollout: 100,
			Variants: []FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}}
	}
	for _, ok := range []func(*Flag){
		func(f *Flag) {},
		func(f *Flag) { f.Variants = nil },
		func(f *Flag) { f.Rollout = 12.34 },
		func(f *Flag) { f.Rollout = 0 },
		func(f *Flag) { f.Key = "new-checkout-2" },
		func(f *Flag) {
			f.Variants = []FlagVariant{{Key: "control", Weight: 33.33}, {Key: "a", Weight: 33.33}, {Key: "b", Weight: 33.34}}
		},
		func(f *Flag) {
			f.Variants = []FlagVariant{{Key: "control", Weight: 0}, {Key: "winner", Weight: 100, Payload: json.RawMessage(`{"x":1}`)}}
		},
		func(f *Flag) {
			f.Conditions = []FlagCondition{{Type: "trait", Trait: "plan", Op: "eq", Value: "pro"}, {Trait: "$os", Op: "exists"},
				{Trait: "seats", Op: "gt", Value: "-1.5e2"}}
		},
		func(f *Flag) { f.Conditions = make([]FlagCondition, 20); fill(f.Conditions) },
	} {
		f := valid()
		ok(&f)
		if err := f.Validate(); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	four := []FlagVariant{{Key: "a", Weight: 25}, {Key: "b", Weight: 25}, {Key: "c", Weight: 25}, {Key: "d", Weight: 25}}
	cases := []struct {
		name   string
		change func(*Flag)
		want   string
	}{
		{"key missing", func(f *Flag) { f.Key = "" }, "key: is required"},
		{"key in capitals", func(f *Flag) { f.Key = "Pricing" }, "key: must be 1 to 64"},
		{"key with a space", func(f *Flag) { f.Key = "a b" }, "key: must be"},
		{"key double underscore", func(f *Flag) { f.Key = "a__b" }, "key: must be"},
		{"key too long", func(f *Flag) { f.Key = strings.Repeat("k", 65) }, "key: must be"},
		{"name missing", func(f *Flag) { f.Name = " " }, "name: is required"},
		{"name with a line break", func(f *Flag) { f.Name = "a\nb" }, "name: must not contain control"},
		{"description NUL", func(f *Flag) { f.Description = "a\x00" }, "description: must not contain NUL"},
		{"rollout over 100", func(f *Flag) { f.Rollout = 100.01 }, "rollout: must be a percentage from 0 to 100"},
		{"rollout negative", func(f *Flag) { f.Rollout = -1 }, "rollout: must be"},
		{"rollout three decimals", func(f *Flag) { f.Rollout = 12.345 }, "rollout: must be"},
		{"one arm", func(f *Flag) { f.Variants = f.Variants[:1] }, "variants: must list 2 to 4 arms"},
		{"five arms", func(f *Flag) { f.Variants = append(four, FlagVariant{Key: "e"}) }, "variants: must list 2 to 4 arms, or none for an on/off flag, not 5"},
		{"weights sum to 99", func(f *Flag) { f.Variants[1].Weight = 49 }, "variants: the weights must sum to 100, not 99"},
		{"weights sum to 100.01", func(f *Flag) { f.Variants[1].Weight = 50.01 }, "variants: the weights must sum to 100, not 100.01"},
		{"duplicate arm", func(f *Flag) { f.Variants[1].Key = "control" }, `variants[1].key: "control" is already an arm`},
		{"malformed arm key", func(f *Flag) { f.Variants[0].Key = "Control!" }, "variants[0].key: must be"},
		{"arm named holdout", func(f *Flag) { f.Variants[1].Key = "holdout" }, `variants[1].key: "holdout" names the users who are in no arm`},
		{"arm named excluded", func(f *Flag) { f.Variants[0].Key = "excluded" }, `variants[0].key: "excluded" names the users who are in no arm`},
		{"negative weight", func(f *Flag) { f.Variants[0].Weight = -10; f.Variants[1].Weight = 110 }, "variants[0].weight: must be"},
		{"payload not JSON", func(f *Flag) { f.Variants[0].Payload = json.RawMessage(`{`) }, "variants[0].payload: must be JSON"},
		{"21 conditions", func(f *Flag) { f.Conditions = make([]FlagCondition, 21); fill(f.Conditions) }, "conditions: must list at most 20 conditions, not 21"},
		{"unknown condition type", func(f *Flag) { f.Conditions = []FlagCondition{{Type: "segment"}} }, `conditions[0].type: must be trait (a condition on a user property) or cohort`},
		{"cohort condition without a cohort", func(f *Flag) { f.Conditions = []FlagCondition{{Type: "cohort", Op: "in"}} }, `conditions[0].cohortId: must be the id of a cohort`},
		{"cohort condition operator", func(f *Flag) { f.Conditions = []FlagCondition{{Type: "cohort", CohortID: 3, Op: "eq"}} }, `conditions[0].op: must be in or not_in for a cohort condition`},
		{"cohort condition with a trait", func(f *Flag) { f.Conditions = []FlagCondition{{Type: "cohort", CohortID: 3, Op: "in", Trait: "plan"}} }, `conditions[0]: a cohort condition has no trait or value`},
		{"trait condition with a cohort", func(f *Flag) { f.Conditions = []FlagCondition{{Trait: "plan", Op: "exists", CohortID: 3}} }, `conditions[0].cohortId: belongs to a cohort condition`},
		{"condition without trait", func(f *Flag) { f.Conditions = []FlagCondition{{Op: "exists"}} }, `conditions[0].trait: must be a trait name`},
		{"condition operator", func(f *Flag) { f.Conditions = []FlagCondition{{Trait: "a", Op: "eq"}, {Trait: "b", Op: "is"}} }, `conditions[1].op: must be eq, neq, contains, exists, gt or lt`},
		{"condition value too long", func(f *Flag) { f.Conditions = []FlagCondition{{Trait: "a", Op: "eq", Value: strings.Repeat("v", 501)}} }, `conditions[0].value: must be at most 500 characters`},
		{"gt not a number", func(f *Flag) { f.Conditions = []FlagCondition{{Trait: "a", Op: "gt", Value: "ten"}} }, `conditions[0].value: must be a number for gt`},
		{"lt hexadecimal", func(f *Flag) { f.Conditions = []FlagCondition{{Trait: "a", Op: "lt", Value: "0x10"}} }, `conditions[0].value: must be a number for lt`},
		{"payload too large", func(f *Flag) { f.Variants[0].Payload = json.RawMessage(`"` + strings.Repeat("p", 4096) + `"`) }, "variants[0].payload: must be at most 4096 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := valid()
			c.change(&f)
			err := f.Validate()
			if e := AsError(err); err == nil || e.Code != "invalid_request" || !strings.HasPrefix(e.Message, c.want) {
				t.Errorf("Validate() = %v; want %q", err, c.want)
			}
		})
	}
}

// fill makes each condition a valid one.
func fill(cs []FlagCondition) {
	for i := range cs {
		cs[i] = FlagCondition{Trait: "t" + strconv.Itoa(i), Op: "exists"}
	}
}

// TestFlagConditionType checks that a condition sent without a type is
// stored as a trait condition.
func TestFlagConditionType(t *testing.T) {
	f := Flag{Key: "k", Name: "K", Rollout: 50, Conditions: []FlagCondition{{Trait: "plan", Op: "eq", Value: "pro"}}}
	if err := f.Validate(); err != nil || f.Conditions[0].Type != "trait" {
		t.Errorf("%v %+v", err, f.Conditions)
	}
}

func TestFlagChangesFrom(t *testing.T) {
	old := Flag{Key: "k", Name: "K", Rollout: 50}
	if c := old.ChangesFrom(nil); len(c) != 7 || c[6].Field != "conditions" || c[0].Field != "key" || c[0].From != nil || c[0].To != "k" {
		t.Errorf("created: %+v", c)
	}
	same := old
	same.Variants = []FlagVariant{} // nil and empty arms are the same value
	same.Conditions = []FlagCondition{}
	if c := same.ChangesFrom(&old); len(c) != 0 {
		t.Errorf("no change listed %+v", c)
	}
	next := old
	next.Enabled, next.Description = true, "now on"
	c := next.ChangesFrom(&old)
	if len(c) != 2 || c[0].Field != "description" || c[0].From != "" || c[0].To != "now on" || c[1].Field != "enabled" || c[1].To != true {
		t.Errorf("two fields changed: %+v", c)
	}
}

func TestSlug(t *testing.T) {
	for name, want := range map[string]string{
		"Pricing copy test":         "pricing_copy_test",
		"  New  onboarding -- v2! ": "new_onboarding_v2",
		"Checkout (4 arms)":         "checkout_4_arms",
		"Ünïcode café":              "n_code_caf",
		"😀":                         "",
		strings.Repeat("ab ", 40):   strings.TrimRight(strings.Repeat("ab_", 22)[:64], "_"),
	} {
		if got := Slug(name); got != want {
			t.Errorf("Slug(%q) = %q, want %q", name, got, want)
		}
		if got := Slug(name); got != "" {
			f := Flag{Key: got, Name: "x"}
			if err := f.Validate(); err != nil {
				t.Errorf("Slug(%q) = %q is not a valid key: %v", name, got, err)
			}
		}
	}
}
