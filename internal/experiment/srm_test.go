package experiment

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/flags"
)

var fifty = analytics.Flag{Key: "f", Variants: []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}}

// TestSampleRatioCheckByHand: 1,100 against 900 on 50/50 is
// χ² = 2·100²/1000 = 20 with one degree of freedom, p = erfc(√10) ≈
// 7.74·10⁻⁶, a mismatch; 1,040 against 960 is χ² = 3.2, p ≈ 0.0736, not.
func TestSampleRatioCheckByHand(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c, ok := SampleRatioCheck(fifty, map[string]int64{"control": 1100, "treatment": 900}, now)
	if !ok || !c.Mismatch || !c.CheckedAt.Equal(now) || c.Arms[0].Observed != 0.55 || c.Arms[1].Expected != 0.5 || c.Arms[0].Exposed != 1100 {
		t.Fatalf("55/45: %+v", c)
	}
	near(t, "p of 55/45", c.PValue, 7.7442e-6, 1e-9)
	c, _ = SampleRatioCheck(fifty, map[string]int64{"control": 1040, "treatment": 960}, now)
	near(t, "p of 52/48", c.PValue, 0.073638, 1e-6)
	if c.Mismatch {
		t.Error("52/48 of 2,000 is a mismatch")
	}
	// Three arms 40/30/30 exactly on their weights: χ² = 0, p = 1.
	three := analytics.Flag{Variants: []analytics.FlagVariant{{Key: "a", Weight: 40}, {Key: "b", Weight: 30}, {Key: "c", Weight: 30}}}
	if c, _ := SampleRatioCheck(three, map[string]int64{"a": 400, "b": 300, "c": 300}, now); c.PValue != 1 || c.Mismatch {
		t.Errorf("on the weights: %+v", c)
	}
	// Users in an arm of weight 0 cannot happen unless the split is broken.
	zero := analytics.Flag{Variants: []analytics.FlagVariant{{Key: "a", Weight: 0}, {Key: "b", Weight: 50}, {Key: "c", Weight: 50}}}
	if c, _ := SampleRatioCheck(zero, map[string]int64{"a": 3, "b": 300, "c": 300}, now); c.PValue != 0 || !c.Mismatch {
		t.Errorf("users of a 0 %% arm: %+v", c)
	}
	// Below 100 exposures: no check, however skewed.
	if _, ok := SampleRatioCheck(fifty, map[string]int64{"control": 99}, now); ok {
		t.Error("99 exposures were checked")
	}
}

// TestFalsePauseRate measures how often a healthy 50/50 experiment is
// paused when it is checked every 5 minutes for 30 days (8,640 checks of
// the cumulative exposures), by simulation: docs/experiments.md gives the
// figure. Each check adds three users, each to either arm with
// probability ½; the rate hardly depends on the traffic (a larger
// simulation gave 3.0 %, 3.5 % and 3.4 % at 3, 35 and 350 users a check).
func TestFalsePauseRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	r := rand.New(rand.NewPCG(20261125, 5))
	const experiments, checks, perCheck = 1000, 30 * 24 * 12, 3
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	paused := 0
	for range experiments {
		exposed := map[string]int64{}
		for range checks {
			for range perCheck {
				exposed[fifty.Variants[r.IntN(2)].Key]++
			}
			if c, ok := SampleRatioCheck(fifty, exposed, now); ok && c.Mismatch {
				paused++
				break
			}
		}
	}
	rate := float64(paused) / experiments
	t.Logf("false pauses: %d of %d healthy experiments (%.1f %%) over 30 days of 5-minute checks", paused, experiments, 100*rate)
	// One check alone pauses 0.1 %; 8,640 correlated looks, a few
	// percent. Three standard errors around the larger simulation's 3.3 %.
	if se := math.Sqrt(0.033 * 0.967 / experiments); math.Abs(rate-0.033) > 3*se {
		t.Errorf("false-pause rate %.2f %%, want 3.3 %% ± %.1f", 100*rate, 300*se)
	}
}

// TestFalsePauseRatePartialRollout repeats TestFalsePauseRate for flags
// rolled out to 10, 50 and 80 % with a 10 % holdout: each user is drawn
// through the real assignment (flags.Assign), exposed as the SDKs expose
// them (Assignment.Exposed: the arm, holdout or excluded), and the check
// counts the exposures it is given, as the checker does. Healthy partial
// rollouts must pause no more often than full ones (docs/experiments.md,
// "False pauses"). The same users exposed as the SDKs did before
// (control for a user outside the rollout) pause every experiment.
func TestFalsePauseRatePartialRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const experiments, checks, perCheck = 400, 30 * 24 * 12, 3
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(20261127, 35))
	total, totalPaused := 0, 0
	for _, rollout := range []float64{10, 50, 80} {
		paused, oldPaused, inArms := 0, 0, int64(0)
		for e := range experiments {
			f := &flags.Flag{Key: "exp_" + strconv.Itoa(e), Enabled: true, Rollout: rollout,
				Variants:   []flags.Variant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}},
				Experiment: &flags.Experiment{ID: int64(e), Status: "running", Holdout: 0.1}}
			exposed, old := map[string]int64{}, map[string]int64{}
			done, oldDone := false, false
			id := make([]byte, 0, 24)
			for range checks {
				for range perCheck {
					id = strconv.AppendUint(append(id[:0], 'u'), r.Uint64(), 36)
					a, _ := flags.Assign(f, string(id), nil, nil)
					exposed[a.Exposed()]++
					if !a.Holdout {
						old[a.Variant]++ // the old SDKs: control for a user outside the rollout
					}
				}
				if !done {
					if c, ok := SampleRatioCheck(fifty, exposed, now); ok && c.Mismatch {
						done = true
						paused++
					}
				}
				if !oldDone {
					if c, ok := SampleRatioCheck(fifty, old, now); ok && c.Mismatch {
						oldDone = true
						oldPaused++
					}
				}
				if done && oldDone {
					break
				}
			}
			inArms += exposed["control"] + exposed["treatment"]
		}
		rate := float64(paused) / experiments
		t.Logf("rollout %v %%, holdout 10 %%: %d of %d healthy experiments paused (%.1f %%) over 8,640 checks, %d users in the arms each on average; exposed as the old SDKs did, %d paused",
			rollout, paused, experiments, 100*rate, inArms/experiments, oldPaused)
		// At most the documented rate, 3.3 %, and three standard errors
		// of one rollout's experiments. Fewer users a check than a full
		// rollout's give fewer distinct looks, so the rate may be lower.
		if se := math.Sqrt(0.033 * 0.967 / experiments); rate > 0.033+3*se {
			t.Errorf("rollout %v %%: false-pause rate %.2f %%, want at most 3.3 %% + %.1f", rollout, 100*rate, 300*se)
		}
		if oldPaused < experiments*9/10 {
			t.Errorf("rollout %v %%: the old exposures paused only %d of %d experiments", rollout, oldPaused, experiments)
		}
		total += experiments
		totalPaused += paused
	}
	rate := float64(totalPaused) / float64(total)
	t.Logf("all partial rollouts: %d of %d paused (%.2f %%)", totalPaused, total, 100*rate)
	if se := math.Sqrt(0.033 * 0.967 / float64(total)); rate > 0.033+3*se {
		t.Errorf("false-pause rate %.2f %%, want at most 3.3 %% + %.1f", 100*rate, 300*se)
	}
}
