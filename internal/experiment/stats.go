// Package experiment analyses A/B experiments: the statistics of each
// arm's conversions against control's, the results an experiment's page
// shows, and the sample-ratio check that pauses an experiment whose split
// is broken. The methods, and the textbook values their tests reproduce,
// are in docs/experiments.md.
package experiment

import "math"

// z95 is the standard normal quantile of 0.975: a two-sided 95 % interval
// is the estimate ± z95 standard errors.
const z95 = 1.959963984540054

// z80 is the standard normal quantile of 0.8, for 80 % power.
const z80 = 0.8416212335729143

// normalCDF is Φ, the standard normal distribution function.
func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// Estimate is a point estimate with its 95 % confidence interval.
type Estimate struct {
	Estimate float64 `json:"estimate"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
}

// Comparison is one arm's conversion rate against control's.
type Comparison struct {
	// Absolute is the difference of the rates, treatment minus control,
	// with a Wald interval from the unpooled standard error.
	Absolute Estimate
	// Relative is Absolute over control's rate, with a delta-method
	// interval; nil while control's rate is 0.
	Relative *Estimate
	// PValue is the two-sided p-value of the pooled two-proportion z-test.
	PValue float64
	// ChanceToBeat is the posterior probability that the arm's true rate
	// exceeds control's, each with a uniform Beta(1, 1) prior.
	ChanceToBeat float64
}

// Compare compares xt conversions of nt exposed users in an arm with xc of
// nc in control. Both n must be positive.
func Compare(xc, nc, xt, nt int64) Comparison {
	pc, pt := float64(xc)/float64(nc), float64(xt)/float64(nt)
	varC, varT := rateVariance(xc, nc), rateVariance(xt, nt)
	d := pt - pc
	se := math.Sqrt(varC + varT)
	c := Comparison{Absolute: Estimate{d, d - z95*se, d + z95*se}, PValue: 1, ChanceToBeat: ChanceToBeat(xc, nc, xt, nt)}
	if pc > 0 {
		r := d / pc
		// Delta method for pt/pc − 1: Var ≈ varT/pc² + pt²·varC/pc⁴.
		seR := math.Sqrt(varT/(pc*pc) + pt*pt*varC/(pc*pc*pc*pc))
		// A rate cannot fall below 0, so neither can the arm's rate
		// relative to control's fall below −100 %.
		c.Relative = &Estimate{r, max(r-z95*seR, -1), r + z95*seR}
	}
	pool := float64(xc+xt) / float64(nc+nt)
	if sePool := math.Sqrt(pool * (1 - pool) * (1/float64(nc) + 1/float64(nt))); sePool > 0 {
		c.PValue = 2 * normalCDF(-math.Abs(d)/sePool)
	}
	return c
}

// rateVariance is the variance of the rate x/n, p(1−p)/n. With no
// conversion or every user converted that is 0, and an interval would
// shrink to a point; the rate is then taken as Agresti and Caffo's
// (x+1)/(n+2) for the variance alone.
func rateVariance(x, n int64) float64 {
	p := float64(x) / float64(n)
	if x == 0 || x == n {
		p = float64(x+1) / float64(n+2)
	}
	return p * (1 - p) / float64(n)
}

// exactBetaLimit is the largest count of conversions (on the side summed
// over) for which ChanceToBeat uses the exact sum; beyond it, where the
// posteriors are very nearly normal, it uses the normal approximation.
const exactBetaLimit = 20000

// ChanceToBeat returns P(pT > pC) for pC ~ Beta(1+xc, 1+nc−xc) and
// pT ~ Beta(1+xt, 1+nt−xt): the posteriors of the two rates after uniform
// priors. It sums Evan Miller's closed form,
//
//	P(pB > pA) = Σ_{i=0}^{αB−1} B(αA+i, βA+βB) / ((βB+i)·B(1+i, βB)·B(αA, βA)),
//
// over whichever side has fewer conversions (P(pA > pB) is one minus it),
// in logarithms; with more than exactBetaLimit conversions on both sides
// it compares two normal distributions of the same means and variances.
func ChanceToBeat(xc, nc, xt, nt int64) float64 {
	aC, bC := float64(1+xc), float64(1+nc-xc)
	aT, bT := float64(1+xt), float64(1+nt-xt)
	if min(xc, xt) > exactBetaLimit {
		mC, vC := betaMoments(aC, bC)
		mT, vT := betaMoments(aT, bT)
		return normalCDF((mT - mC) / math.Sqrt(vC+vT))
	}
	if xt <= xc {
		return betaGreater(aC, bC, aT, bT)
	}
	return 1 - betaGreater(aT, bT, aC, bC)
}

// betaGreater is P(B > A) for A ~ Beta(aA, bA) and B ~ Beta(aB, bB), aB a
// whole number: Evan Miller's sum of aB terms.
func betaGreater(aA, bA, aB, bB float64) float64 {
	total := 0.0
	lbA := lbeta(aA, bA)
	for i := 0.0; i < aB; i++ {
		total += math.Exp(lbeta(aA+i, bA+bB) - math.Log(bB+i) - lbeta(1+i, bB) - lbA)
	}
	return min(max(total, 0), 1)
}

// lbeta is the logarithm of the beta function.
func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// betaMoments returns the mean and variance of Beta(a, b).
func betaMoments(a, b float64) (mean, variance float64) {
	return a / (a + b), a * b / ((a + b) * (a + b) * (a + b + 1))
}

// ChiSquareP returns the upper tail P(X ≥ x) of a chi-square distribution
// with df degrees of freedom, 1 to 3 (an experiment has 2 to 4 arms), in
// closed form:
//
//	df 1: erfc(√(x/2))
//	df 2: e^(−x/2)
//	df 3: erfc(√(x/2)) + √(2x/π)·e^(−x/2)
func ChiSquareP(x float64, df int) float64 {
	if x <= 0 {
		return 1
	}
	switch df {
	case 1:
		return math.Erfc(math.Sqrt(x / 2))
	case 2:
		return math.Exp(-x / 2)
	case 3:
		return math.Erfc(math.Sqrt(x/2)) + math.Sqrt(2*x/math.Pi)*math.Exp(-x/2)
	}
	panic("experiment: ChiSquareP takes 1 to 3 degrees of freedom")
}

// SampleSize returns the users each of two arms needs for a two-sided
// test at the 5 % level to detect, with 80 % power, a change of the rate
// p1 by the fraction lift (0.1: from p1 to 1.1·p1):
//
//	n = (z_0.975 + z_0.8)² · (p1(1−p1) + p2(1−p2)) / (p2 − p1)²
//
// rounded up; 0 when p1 is not strictly between 0 and 1.
func SampleSize(p1, lift float64) int64 {
	p2 := p1 * (1 + lift)
	if p1 <= 0 || p1 >= 1 || p2 >= 1 || lift == 0 {
		return 0
	}
	z := z95 + z80
	return int64(math.Ceil(z * z * (p1*(1-p1) + p2*(1-p2)) / ((p2 - p1) * (p2 - p1))))
}
