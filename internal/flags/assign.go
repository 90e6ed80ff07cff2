// Package flags evaluates feature flags and experiments the way every Strata
// SDK does (the browser's and the Node SDK's), so that the server's
// experiment results put each user in the arm the SDKs did. The rule is in
// docs/flags.md; the shared vectors in sdk/browser/test/assignment.json pin
// it, and this package's tests reproduce every one of them.
package flags

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Flag is a flag as the SDKs evaluate it: one entry of the flags list of
// GET /api/v1/config (SdkFlag in api/openapi.yaml).
type Flag struct {
	Key     string  `json:"key"`
	Enabled bool    `json:"enabled"`
	Rollout float64 `json:"rollout"` // percentage of users, 0–100
	// Variants are the arms in order; weights are percentages summing
	// to 100. None: the flag is on or off.
	Variants   []Variant   `json:"variants"`
	Experiment *Experiment `json:"experiment"`
	// Conditions target the flag: a user whose properties fail one of
	// them gets control and is excluded from the experiment. None targets
	// every user.
	Conditions []Condition `json:"conditions"`
}

// Variant is one arm of a flag.
type Variant struct {
	Key    string  `json:"key"`
	Weight float64 `json:"weight"`
}

// Experiment is what assignment needs of a flag's experiment.
type Experiment struct {
	ID      int64   `json:"id"`
	Status  string  `json:"status"`  // draft, running, paused or completed
	Holdout float64 `json:"holdout"` // fraction of users, 0–0.25
}

// Assignment is the outcome of assigning one user to one flag.
type Assignment struct {
	// Variant is what getVariant returns.
	Variant string
	// Holdout marks a user in the experiment's holdout (Variant is then
	// control): such a user's exposure counts for no arm.
	Holdout bool
	// Excluded marks a user outside the flag's rollout, or whose
	// properties fail its conditions (Variant is then control). Like a holdout user, such a user is not in the experiment:
	// the exposure says "excluded" and counts for no arm, so that a partial
	// rollout never swells control (docs/experiments.md).
	Excluded bool
}

// The variants an exposure names for a user who is in no arm. No arm may
// have these keys (analytics.ReservedVariant).
const (
	ExposeHoldout  = "holdout"
	ExposeExcluded = "excluded"
)

// Exposed is the variant the user's $exposure names: the arm, or holdout or
// excluded for a user who is in no arm.
func (a Assignment) Exposed() string {
	switch {
	case a.Holdout:
		return ExposeHoldout
	case a.Excluded:
		return ExposeExcluded
	}
	return a.Variant
}

// Assign puts the user id, whose properties are props (nil for none) and
// whose cohorts are cohorts (nil when none is known), in an arm of f. It reports false when f is missing or disabled: there is
// nothing to expose, and the caller answers control. A user the flag's
// conditions do not target is excluded, after the holdout and before the
// rollout bucket, so that the users they target keep their buckets.
func Assign(f *Flag, id string, props map[string]any, cohorts Cohorts) (Assignment, bool) {
	if f == nil || !f.Enabled {
		return Assignment{}, false
	}
	exp := f.Experiment
	if exp != nil && exp.Status == "paused" {
		return Assignment{Variant: "control"}, true
	}
	if exp != nil && exp.Status == "running" && Bucket("holdout", f.Key, id) < basisPoints(exp.Holdout*10000) {
		return Assignment{Variant: "control", Holdout: true}, true
	}
	if !Targeted(f.Conditions, props, cohorts) {
		return Assignment{Variant: "control", Excluded: true}, true
	}
	if Bucket("rollout", f.Key, id) >= basisPoints(f.Rollout*100) {
		return Assignment{Variant: "control", Excluded: true}, true
	}
	if len(f.Variants) == 0 {
		return Assignment{Variant: "on"}, true
	}
	b := Bucket("variant", f.Key, id)
	cumulative := 0
	for _, v := range f.Variants {
		cumulative += basisPoints(v.Weight * 100)
		if cumulative > b {
			return Assignment{Variant: v.Key}, true
		}
	}
	// Weights summing to less than 100 leave a gap; its users get control.
	return Assignment{Variant: "control"}, true
}

// basisPoints rounds a share in basis points to a whole number, as the
// SDKs' Math.round does (half up), so that float noise such as
// 3332.9999999999995 for 33.33 % never decides an arm differently.
func basisPoints(x float64) int { return int(math.Floor(x + 0.5)) }

// Bucket is the user's bucket, 0–9999, for one decision about one flag:
// MurmurHash3 of "salt:key:id", modulo 10000.
func Bucket(salt, key, id string) int {
	return int(Murmur3(salt+":"+key+":"+id) % 10000)
}

// Murmur3 is MurmurHash3's x86 32-bit variant with seed 0 over the UTF-8
// bytes of s.
func Murmur3(s string) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	b := []byte(s)
	var h uint32
	for len(b) >= 4 {
		k := binary.LittleEndian.Uint32(b)
		h ^= bits.RotateLeft32(k*c1, 15) * c2
		h = bits.RotateLeft32(h, 13)*5 + 0xe6546b64
		b = b[4:]
	}
	var k uint32
	switch len(b) {
	case 3:
		k ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(b[0])
		h ^= bits.RotateLeft32(k*c1, 15) * c2
	}
	h ^= uint32(len(s))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
