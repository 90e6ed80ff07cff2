package experiment

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f (±%g)", what, got, want, tol)
	}
}

// TestCompareByHand checks the z-test and both intervals against the
// arithmetic written out in docs/experiments.md for 100 of 1,000 users in
// control against 130 of 1,000 in treatment. The p-value is also what R's
// prop.test(c(130, 100), c(1000, 1000), correct = FALSE) reports: the
// chi-square of a 2×2 table is z².
func TestCompareByHand(t *testing.T) {
	c := Compare(100, 1000, 130, 1000)
	near(t, "p-value", c.PValue, 0.035488, 1e-6)
	near(t, "absolute", c.Absolute.Estimate, 0.03, 1e-12)
	near(t, "absolute low", c.Absolute.Low, 0.002068, 1e-6)
	near(t, "absolute high", c.Absolute.High, 0.057932, 1e-6)
	if c.Relative == nil {
		t.Fatal("no relative uplift")
	}
	near(t, "relative", c.Relative.Estimate, 0.3, 1e-12)
	near(t, "relative low", c.Relative.Low, -0.019179, 1e-6)
	near(t, "relative high", c.Relative.High, 0.619179, 1e-6)
	near(t, "chance to beat", c.ChanceToBeat, monteCarlo(100, 1000, 130, 1000), 0.005)
}

func TestCompareEdges(t *testing.T) {
	// No conversion anywhere: nothing to tell apart.
	c := Compare(0, 50, 0, 50)
	if c.PValue != 1 || c.Relative != nil || c.Absolute.Estimate != 0 {
		t.Errorf("no conversions: %+v", c)
	}
	near(t, "chance with no data either way", c.ChanceToBeat, 0.5, 1e-9)
	// Control without conversions has no relative uplift.
	if c := Compare(0, 100, 5, 100); c.Relative != nil || c.PValue >= 0.05 || c.ChanceToBeat < 0.95 {
		t.Errorf("control at 0 %%: %+v", c)
	}
	// An arm without conversions: the intervals keep a width (its
	// variance at the adjusted rate 1/152), and the relative one stops at
	// −100 %.
	c = Compare(30, 300, 0, 150)
	se := math.Sqrt(0.1*0.9/300 + (1.0/152)*(151.0/152)/150)
	near(t, "absolute low at 0 conversions", c.Absolute.Low, -0.1-z95*se, 1e-12)
	if c.Relative == nil || c.Relative.Estimate != -1 || c.Relative.Low != -1 || c.Relative.High <= -1 {
		t.Errorf("relative at 0 conversions: %+v", c.Relative)
	}
	// Identical arms: p = 1, chance 1/2.
	c = Compare(40, 400, 40, 400)
	near(t, "identical p", c.PValue, 1, 1e-12)
	near(t, "identical chance", c.ChanceToBeat, 0.5, 1e-9)
}

// TestChanceToBeatByHand uses posteriors whose integral is done by hand:
// no data in control (Beta(1,1), uniform) against one conversion of one
// user (Beta(2,1), density 2p): P = ∫ 2p·p dp = 2/3. Control converted its
// one user (Beta(2,1)) and the arm did not (Beta(1,2), density 2(1−p)):
// P = ∫∫_{b>a} 2a·2(1−b) = 1/6.
func TestChanceToBeatByHand(t *testing.T) {
	near(t, "uniform vs Beta(2,1)", ChanceToBeat(0, 0, 1, 1), 2.0/3, 1e-12)
	near(t, "Beta(2,1) vs Beta(1,2)", ChanceToBeat(1, 1, 0, 1), 1.0/6, 1e-12)
	// The two orders add up to one, whichever side is summed over.
	for _, c := range [][4]int64{{3, 10, 7, 12}, {120, 1000, 95, 980}, {0, 5, 5, 5}} {
		near(t, "symmetry", ChanceToBeat(c[0], c[1], c[2], c[3])+ChanceToBeat(c[2], c[3], c[0], c[1]), 1, 1e-9)
	}
}

// TestChanceToBeatLargeCounts checks that the normal approximation taken
// beyond exactBetaLimit agrees with the exact sum there, and with a Monte
// Carlo estimate.
func TestChanceToBeatLargeCounts(t *testing.T) {
	xc, nc, xt, nt := int64(exactBetaLimit+1), int64(200000), int64(exactBetaLimit+260), int64(200000)
	exact := 1 - betaGreater(float64(1+xt), float64(1+nt-xt), float64(1+xc), float64(1+nc-xc))
	approx := ChanceToBeat(xc, nc, xt, nt)
	near(t, "normal approximation", approx, exact, 1e-3)
	near(t, "Monte Carlo", approx, monteCarlo(xc, nc, xt, nt), 0.01)
}

// monteCarlo estimates P(pT > pC) by drawing from both posteriors.
func monteCarlo(xc, nc, xt, nt int64) float64 {
	r := rand.New(rand.NewPCG(1, 2))
	const draws = 200000
	wins := 0
	for range draws {
		if beta(r, float64(1+xt), float64(1+nt-xt)) > beta(r, float64(1+xc), float64(1+nc-xc)) {
			wins++
		}
	}
	return float64(wins) / draws
}

// beta draws from Beta(a, b) as X/(X+Y) of two gamma draws.
func beta(r *rand.Rand, a, b float64) float64 {
	x, y := gamma(r, a), gamma(r, b)
	return x / (x + y)
}

// gamma draws from Gamma(a, 1), a ≥ 1, by Marsaglia and Tsang's method.
func gamma(r *rand.Rand, a float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// TestChiSquareTable reproduces the critical values of the chi-square
// table found in any statistics textbook: the upper 5 % and 0.1 % points
// for 1, 2 and 3 degrees of freedom.
func TestChiSquareTable(t *testing.T) {
	for _, c := range []struct {
		x    float64
		df   int
		want float64
	}{
		{3.841459, 1, 0.05}, {5.991465, 2, 0.05}, {7.814728, 3, 0.05},
		{10.827566, 1, 0.001}, {13.815511, 2, 0.001}, {16.266236, 3, 0.001},
		{0, 2, 1},
	} {
		near(t, "chi-square tail", ChiSquareP(c.x, c.df), c.want, 1e-6)
	}
}

// TestSampleSize: 10 % baseline, 10 % relative lift, by the formula worked
// in docs/experiments.md: 7.84888 · 0.1879 / 0.0001 = 14,748.05 → 14,749.
func TestSampleSize(t *testing.T) {
	if n := SampleSize(0.1, 0.1); n != 14749 {
		t.Errorf("SampleSize(0.1, 0.1) = %d, want 14749", n)
	}
	if n := SampleSize(0, 0.1); n != 0 {
		t.Errorf("at a 0 %% baseline: %d, want 0", n)
	}
}
