package strata

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// flagConfig is one flag of GET /api/v1/config (SdkFlag in the server's
// api/openapi.yaml): rollout and variant weights are percentages, the
// experiment's holdout a fraction.
type flagConfig struct {
	Key        string          `json:"key"`
	Enabled    bool            `json:"enabled"`
	Rollout    float64         `json:"rollout"`
	Variants   []variantConfig `json:"variants"`
	Experiment *experiment     `json:"experiment"`
	// Conditions target the flag; a server older than targeting sends
	// none.
	Conditions []condition `json:"conditions"`
}

type variantConfig struct {
	Key    string  `json:"key"`
	Weight float64 `json:"weight"`
}

type experiment struct {
	ID      *int64  `json:"id"`
	Status  string  `json:"status"` // draft, running, paused or completed
	Holdout float64 `json:"holdout"`
}

// The variants an exposure names for a user who is in no arm: kept out by
// the experiment's holdout, or outside the flag's rollout. The server
// counts neither in any arm (docs/experiments.md).
const (
	exposeHoldout  = "holdout"
	exposeExcluded = "excluded"
)

// assignment is the outcome of assigning one user to one flag.
type assignment struct {
	// variant is what Variant returns.
	variant string
	// exposed is what the user's $exposure names: the arm, or holdout or
	// excluded for a user in no arm.
	exposed string
}

// assign follows the getVariant steps of the server's docs/flags.md, which
// every Strata SDK follows so that a user is in the same arm everywhere.
// It reports false for a missing or disabled flag: there is nothing to
// expose, and the caller answers control. A user whose properties or
// cohorts fail the flag's conditions is excluded, after the holdout and before the rollout
// bucket.
func assign(f *flagConfig, id string, props map[string]any, cohorts map[string]bool) (assignment, bool) {
	if f == nil || !f.Enabled {
		return assignment{}, false
	}
	arm := func(v string) (assignment, bool) { return assignment{variant: v, exposed: v}, true }
	exp := f.Experiment
	if exp != nil && exp.Status == "paused" {
		return arm("control")
	}
	if exp != nil && exp.Status == "running" && bucket("holdout", f.Key, id) < basisPoints(exp.Holdout*10000) {
		return assignment{variant: "control", exposed: exposeHoldout}, true
	}
	if !targeted(f.Conditions, props, cohorts) {
		return assignment{variant: "control", exposed: exposeExcluded}, true
	}
	if bucket("rollout", f.Key, id) >= basisPoints(f.Rollout*100) {
		return assignment{variant: "control", exposed: exposeExcluded}, true
	}
	if len(f.Variants) == 0 {
		return arm("on")
	}
	b := bucket("variant", f.Key, id)
	cumulative := 0
	for _, v := range f.Variants {
		cumulative += basisPoints(v.Weight * 100)
		if cumulative > b {
			return arm(v.Key)
		}
	}
	// Weights summing to less than 100 leave a gap; its users get control.
	return arm("control")
}

// basisPoints rounds a share in basis points to a whole number, half up as
// JavaScript's Math.round does, so that float noise such as
// 3332.9999999999995 for 33.33 % never puts a user in another arm here
// than in the browser.
func basisPoints(x float64) int { return int(math.Floor(x + 0.5)) }

// bucket places a user in 0–9999 for one decision ("rollout", "variant"
// or "holdout") about one flag; the three salts make the decisions
// independent of each other.
func bucket(salt, key, id string) int {
	return int(murmur3(salt+":"+key+":"+id) % 10000)
}

// murmur3 is MurmurHash3's x86 32-bit variant with seed 0 over the UTF-8
// bytes of s: the hash every Strata SDK buckets users with. The SDK has its
// own copy rather than the server's (internal/flags) because it may not
// import the server's packages; both reproduce the shared vectors.
func murmur3(s string) uint32 {
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
