package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The candidate growth models of a scaling fit: each is y = a + b·g(n)
// (constant: y = a) for one fixed g, so every model but constant has the
// same two coefficients and the comparison is between shapes, not
// between numbers of parameters (docs/scaling.md).
const (
	ModelConstant  = "constant"
	ModelLog       = "log"
	ModelLinear    = "linear"
	ModelNLogN     = "n_log_n"
	ModelQuadratic = "quadratic"
)

// Models are the declared candidates, in order of growth.
var Models = []string{ModelConstant, ModelLog, ModelLinear, ModelNLogN, ModelQuadratic}

// Scaling decisions.
const (
	// Chosen: one model's AICc is lower than every other's by the margin
	// and its fit is adequate.
	Chosen = "chosen"
	// Indistinguishable: the best model fits, but others are within the
	// margin; Candidates lists them.
	Indistinguishable = "indistinguishable"
	// InconclusiveFit: too few sizes or observations to compare the
	// models, or no candidate fits the data.
	InconclusiveFit = "inconclusive"
)

// Defaults of the choice rule (calibrated in pkg/stats/fit_sim_test.go).
const (
	// DefaultMargin is the AICc difference the chosen model must have to
	// every other: Burnham & Anderson read Δ ≤ 2 as substantial support
	// for the other model and 4–7 as considerably less.
	DefaultMargin = 4.0
	// DefaultLackOfFitAlpha is the level of the lack-of-fit F test that
	// rejects a best model the replicates contradict.
	DefaultLackOfFitAlpha = 0.05
	// DefaultRejectAlpha is the lack-of-fit level at which the replicates
	// must reject every model but the chosen one.
	DefaultRejectAlpha = 0.001
	// MinScalingSizes is the fewest distinct input sizes a choice needs.
	MinScalingSizes = 3
)

// Growth is g(n) of a model; ok is false where it is undefined (log of a
// non-positive n).
func Growth(model string, n float64) (g float64, ok bool) {
	switch model {
	case ModelLog:
		return math.Log(n), n > 0
	case ModelLinear:
		return n, true
	case ModelNLogN:
		return n * math.Log(n), n > 0
	case ModelQuadratic:
		return n * n, true
	case ModelConstant:
		return 0, true
	}
	return 0, false
}

// Fit is one candidate model fitted by weighted least squares.
type Fit struct {
	Model string `json:"model"`
	// Formula is the model as text, e.g. "a + b·n·ln(n)".
	Formula string `json:"formula"`
	// Coefficients are a (intercept) then b (slope; absent for constant),
	// with their standard errors.
	Intercept   float64  `json:"intercept"`
	InterceptSE float64  `json:"intercept_se"`
	Slope       *float64 `json:"slope,omitempty"`
	SlopeSE     *float64 `json:"slope_se,omitempty"`
	// Parameters is the count of regression coefficients (1 or 2).
	Parameters   int `json:"parameters"`
	Observations int `json:"observations"`
	// WeightedRSS is Σ w·(y − ŷ)²; RelativeRMS is its root mean, which
	// with relative weights reads as a fraction of the level.
	WeightedRSS float64 `json:"weighted_rss"`
	RelativeRMS float64 `json:"relative_rms"`
	// AICc is the small-sample Akaike criterion, nil when the
	// observations are too few (n ≤ K + 1, K = parameters + 1).
	AICc *float64 `json:"aicc,omitempty"`
	// DeltaAICc is AICc minus the lowest AICc of the candidates.
	DeltaAICc *float64 `json:"delta_aicc,omitempty"`
	// LackOfFitP is the p-value of the lack-of-fit F test against the
	// replicates' pure error; nil when it cannot be computed (no size
	// measured twice, or no degrees of freedom for lack of fit).
	LackOfFitP *float64 `json:"lack_of_fit_p,omitempty"`
	// Residuals are the relative residuals (y − ŷ)/ŷ at each distinct
	// size, of the sizes' weighted means, in ascending size order.
	Residuals []float64 `json:"residuals"`
	// Fitted are ŷ at each distinct measured size; nothing is predicted
	// outside the measured range.
	Fitted []float64 `json:"fitted"`
}

// Formula is a model's equation as text.
func Formula(model string) string {
	switch model {
	case ModelConstant:
		return "a"
	case ModelLog:
		return "a + b·ln(n)"
	case ModelLinear:
		return "a + b·n"
	case ModelNLogN:
		return "a + b·n·ln(n)"
	case ModelQuadratic:
		return "a + b·n²"
	}
	return ""
}

// AICc is the corrected Akaike information criterion of a Gaussian
// least-squares fit with n observations, p regression coefficients and
// residual sum of squares rss: AIC = n·ln(rss/n) + 2K, AICc = AIC +
// 2K(K+1)/(n−K−1), where K = p + 1 counts the error variance (Burnham &
// Anderson 2002, §2.4). ok is false when n ≤ K + 1 or rss is not positive.
func AICc(rss float64, n, p int) (float64, bool) {
	k := float64(p + 1)
	nf := float64(n)
	if nf-k-1 <= 0 || !(rss > 0) || math.IsInf(rss, 0) {
		return 0, false
	}
	return nf*math.Log(rss/nf) + 2*k + 2*k*(k+1)/(nf-k-1), true
}

// FitModel fits model to (n, y) with weights w (nil: equal) by weighted
// least squares. Standard errors are the usual ones, σ̂²(XᵀWX)⁻¹ with
// σ̂² = RSS/(N − p). The simple weighted regression is gonum's
// stat.LinearRegression; the standard errors and the criteria are
// computed here from its coefficients.
func FitModel(model string, n, y, w []float64) (Fit, error) {
	if len(n) != len(y) || (w != nil && len(w) != len(y)) {
		return Fit{}, fmt.Errorf("fit %s: %d sizes, %d values, %d weights", model, len(n), len(y), len(w))
	}
	if w == nil {
		w = make([]float64, len(y))
		for i := range w {
			w[i] = 1
		}
	}
	p := 2
	if model == ModelConstant {
		p = 1
	}
	if len(y) <= p {
		return Fit{}, fmt.Errorf("fit %s: %d observations for %d coefficients", model, len(y), p)
	}
	g := make([]float64, len(n))
	for i, x := range n {
		v, ok := Growth(model, x)
		if !ok {
			return Fit{}, fmt.Errorf("fit %s: undefined at n = %g", model, x)
		}
		g[i] = v
	}
	for i := range y {
		if !(w[i] > 0) || math.IsInf(w[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return Fit{}, fmt.Errorf("fit %s: observation %d is not finite or its weight not positive", model, i)
		}
	}
	f := Fit{Model: model, Formula: Formula(model), Parameters: p, Observations: len(y)}
	sw := floatsSum(w)
	var a, b float64
	var sxx, gbar float64
	if p == 1 {
		a = stat.Mean(y, w)
	} else {
		gbar = stat.Mean(g, w)
		for i := range g {
			sxx += w[i] * (g[i] - gbar) * (g[i] - gbar)
		}
		// A size column that does not vary (or varies below rounding)
		// leaves the slope undetermined.
		if !(sxx > 0) || sxx <= 1e-12*sw*gbar*gbar {
			return Fit{}, fmt.Errorf("fit %s: the sizes do not vary", model)
		}
		a, b = stat.LinearRegression(g, y, w, false)
	}
	var rss float64
	for i := range y {
		r := y[i] - a - b*g[i]
		rss += w[i] * r * r
	}
	f.WeightedRSS = rss
	f.RelativeRMS = math.Sqrt(rss / sw)
	dof := float64(len(y) - p)
	s2 := rss / dof
	if p == 1 {
		f.Intercept, f.InterceptSE = a, math.Sqrt(s2/sw)
	} else {
		f.Intercept, f.InterceptSE = a, math.Sqrt(s2*(1/sw+gbar*gbar/sxx))
		se := math.Sqrt(s2 / sxx)
		f.Slope, f.SlopeSE = &b, &se
	}
	// An exact fit has no residual to take a logarithm of: its RSS is
	// floored at a rounding-sized share of the total sum of squares, so
	// it ranks first without an infinite criterion.
	ybar := stat.Mean(y, w)
	var tss float64
	for i := range y {
		tss += w[i] * (y[i] - ybar) * (y[i] - ybar)
	}
	floor := 1e-24 * math.Max(tss, ybar*ybar*sw)
	if v, ok := AICc(math.Max(rss, floor), len(y), p); ok {
		f.AICc = &v
	}
	sizes, groups := groupBySize(n)
	f.Residuals, f.Fitted = make([]float64, len(sizes)), make([]float64, len(sizes))
	var pureSS float64
	for k, idx := range groups {
		var m, ws float64
		for _, i := range idx {
			m += w[i] * y[i]
			ws += w[i]
		}
		m /= ws
		for _, i := range idx {
			pureSS += w[i] * (y[i] - m) * (y[i] - m)
		}
		gk, _ := Growth(model, sizes[k])
		f.Fitted[k] = a + b*gk
		if f.Fitted[k] != 0 {
			f.Residuals[k] = (m - f.Fitted[k]) / f.Fitted[k]
		}
	}
	f.LackOfFitP = lackOfFit(rss, pureSS, 1e-18*math.Max(tss, ybar*ybar*sw), len(y), len(sizes), p)
	return f, nil
}

// lackOfFit is the p-value of the F test of lack of fit: the residual
// sum of squares split into pure error (within sizes, N − m degrees of
// freedom) and lack of fit (m − p), F = (LOF/(m−p)) / (PE/(N−m)). With
// no pure error (identical replicates), a lack of fit above rounding
// (tiny) rejects and none does not.
func lackOfFit(rss, pure, tiny float64, n, m, p int) *float64 {
	d1, d2 := float64(m-p), float64(n-m)
	if d1 <= 0 || d2 <= 0 {
		return nil
	}
	lof := math.Max(rss-pure, 0)
	var pv float64
	switch {
	case pure <= tiny && lof > tiny:
		pv = 0
	case pure <= tiny:
		pv = 1
	default:
		pv = distuv.F{D1: d1, D2: d2}.Survival((lof / d1) / (pure / d2))
	}
	return &pv
}

// groupBySize returns the distinct sizes in ascending order and the
// indices of the observations at each.
func groupBySize(n []float64) ([]float64, [][]int) {
	sizes := slices.Clone(n)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	groups := make([][]int, len(sizes))
	for i, x := range n {
		k, _ := slices.BinarySearch(sizes, x)
		groups[k] = append(groups[k], i)
	}
	return sizes, groups
}

func floatsSum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// Choice is the model a scaling fit settles on, or why it does not.
type Choice struct {
	Decision string `json:"decision"`
	// Model is the chosen model (decision chosen), else empty.
	Model string `json:"model,omitempty"`
	// Candidates are the models within the margin of the best, best
	// first (decision indistinguishable; the chosen model alone when
	// chosen).
	Candidates []string `json:"candidates"`
	Margin     float64  `json:"margin"`
	Reason     string   `json:"reason"`
}

// ChooseOptions are the choice rule's settings; zero values take the
// defaults.
type ChooseOptions struct {
	Margin         float64
	LackOfFitAlpha float64
	// RejectAlpha is the lack-of-fit level at which every model but the
	// chosen one must be rejected.
	RejectAlpha float64
}

// Choose applies the rule of docs/scaling.md to fits of the same data
// measured at sizes distinct sizes: with fewer than MinScalingSizes, or
// fewer than two models with an AICc, it is inconclusive; when the
// replicates reject the lowest-AICc model's fit (lack of fit at alpha) it
// is inconclusive; a model is chosen only when every other model's AICc
// exceeds its own by at least the margin; otherwise the models within the
// margin are indistinguishable. It sets each fit's DeltaAICc. R² plays no
// part.
func Choose(fits []Fit, sizes int, opt ChooseOptions) Choice {
	if opt.Margin <= 0 {
		opt.Margin = DefaultMargin
	}
	if opt.LackOfFitAlpha <= 0 {
		opt.LackOfFitAlpha = DefaultLackOfFitAlpha
	}
	if opt.RejectAlpha <= 0 {
		opt.RejectAlpha = DefaultRejectAlpha
	}
	c := Choice{Decision: InconclusiveFit, Candidates: []string{}, Margin: opt.Margin}
	if sizes < MinScalingSizes {
		c.Reason = fmt.Sprintf("%d distinct input size(s) measured; a choice needs at least %d", sizes, MinScalingSizes)
		return c
	}
	var ranked []int
	for i := range fits {
		if fits[i].AICc != nil {
			ranked = append(ranked, i)
		}
	}
	if len(ranked) < 2 {
		c.Reason = "too few observations for the corrected AIC of two models (each needs more than parameters + 2)"
		return c
	}
	slices.SortStableFunc(ranked, func(i, j int) int { return cmp.Compare(*fits[i].AICc, *fits[j].AICc) })
	best := &fits[ranked[0]]
	for _, i := range ranked {
		d := *fits[i].AICc - *best.AICc
		fits[i].DeltaAICc = &d
	}
	if best.LackOfFitP != nil && *best.LackOfFitP < opt.LackOfFitAlpha {
		c.Reason = fmt.Sprintf("the best candidate, %s, does not fit the replicates (lack-of-fit p = %.3g < %g): the growth is none of the declared models", best.Model, *best.LackOfFitP, opt.LackOfFitAlpha)
		return c
	}
	for _, i := range ranked {
		if *fits[i].DeltaAICc < opt.Margin {
			c.Candidates = append(c.Candidates, fits[i].Model)
		}
	}
	if len(c.Candidates) > 1 {
		c.Decision = Indistinguishable
		c.Reason = fmt.Sprintf("%s are within %g of the lowest AICc: the data do not tell them apart", strings.Join(c.Candidates, ", "), opt.Margin)
		return c
	}
	next := fits[ranked[1]]
	if best.LackOfFitP == nil {
		c.Candidates = []string{}
		c.Reason = fmt.Sprintf("%s has the lowest AICc, %.1f below the next (%s), but no size was measured twice, so no fit can be checked against the measurement noise; run more blocks", best.Model, *next.DeltaAICc, next.Model)
		return c
	}
	// Every other model must be contradicted by the replicates, not only
	// rank lower: AICc alone, at the few observations a scaling
	// experiment has, is no error rate (docs/scaling.md).
	for _, i := range ranked[1:] {
		if p := fits[i].LackOfFitP; p == nil || *p >= opt.RejectAlpha {
			c.Candidates = append(c.Candidates, fits[i].Model)
		}
	}
	if len(c.Candidates) > 1 {
		c.Decision = Indistinguishable
		c.Reason = fmt.Sprintf("%s has the lowest AICc by at least %g, but the replicates do not reject %s (lack-of-fit p ≥ %g)", best.Model, opt.Margin, strings.Join(c.Candidates[1:], ", "), opt.RejectAlpha)
		return c
	}
	c.Decision, c.Model = Chosen, best.Model
	c.Reason = fmt.Sprintf("%s has the lowest AICc, %.1f below the next (%s), fits the replicates (lack-of-fit p = %.3g), and every other model is rejected by them (p < %g)", best.Model, *next.DeltaAICc, next.Model, *best.LackOfFitP, opt.RejectAlpha)
	return c
}

// FitScaling fits every model of models (nil: Models) to observations
// (n[i], y[i]), one per succeeded trial, and chooses among them. The
// weights are relative, 1/m², where m is the median of the observations
// at the same size: timing noise grows with the level, and weighting by
// the data (not by a model's prediction) gives every model the same
// weights, so their AICc compare. A model undefined at a measured size
// (log of 0) or that cannot be fitted is left out with the reason.
func FitScaling(n, y []float64, models []string, opt ChooseOptions) ([]Fit, map[string]string, Choice) {
	if models == nil {
		models = Models
	}
	sizes, groups := groupBySize(n)
	w := make([]float64, len(y))
	for _, idx := range groups {
		vals := make([]float64, len(idx))
		for k, i := range idx {
			vals[k] = y[i]
		}
		m := Median(vals)
		for _, i := range idx {
			if m != 0 {
				w[i] = 1 / (m * m)
			}
		}
	}
	skipped := map[string]string{}
	var fits []Fit
	for _, model := range models {
		f, err := FitModel(model, n, y, w)
		if err != nil {
			skipped[model] = err.Error()
			continue
		}
		fits = append(fits, f)
	}
	return fits, skipped, Choose(fits, len(sizes), opt)
}
