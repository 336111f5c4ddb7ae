package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestFitExact: data on a model's curve give its coefficients exactly,
// residuals of zero, and a choice of that model.
func TestFitExact(t *testing.T) {
	sizes := []float64{1024, 2048, 4096, 8192, 16384}
	for _, tc := range []struct {
		model string
		a, b  float64
	}{
		{ModelLinear, 3, 2},
		{ModelQuadratic, 100, 0.5},
		{ModelLog, 50, 7},
		{ModelNLogN, 10, 0.25},
	} {
		t.Run(tc.model, func(t *testing.T) {
			// Two identical replicates at each size: no pure error.
			var n, y []float64
			for range 2 {
				for _, x := range sizes {
					g, _ := Growth(tc.model, x)
					n, y = append(n, x), append(y, tc.a+tc.b*g)
				}
			}
			var fits []Fit
			for _, m := range Models {
				f, err := FitModel(m, n, y, nil)
				if err != nil {
					t.Fatal(err)
				}
				fits = append(fits, f)
				if m != tc.model {
					continue
				}
				if !near(f.Intercept, tc.a, 1e-9) || f.Slope == nil || !near(*f.Slope, tc.b, 1e-9) {
					t.Errorf("%s: a, b = %v, %v; want %v, %v", m, f.Intercept, *f.Slope, tc.a, tc.b)
				}
				for k, r := range f.Residuals {
					if math.Abs(r) > 1e-9 {
						t.Errorf("%s: residual %d = %g", m, k, r)
					}
				}
				if len(f.Fitted) != len(sizes) {
					t.Errorf("%s: %d fitted values for %d sizes", m, len(f.Fitted), len(sizes))
				}
			}
			c := Choose(fits, len(sizes), ChooseOptions{})
			if c.Decision != Chosen || c.Model != tc.model {
				t.Errorf("choice %+v, want %s", c, tc.model)
			}
		})
	}
}

// TestFitStandardErrors checks the coefficients and standard errors of an
// unweighted line against a hand computation: x = 1..4, y = 1, 3, 2, 4
// gives b = Sxy/Sxx = 4/5, a = 0.5, RSS = 1.8, σ̂² = 0.9,
// SE(b) = √(0.9/5), SE(a) = √(0.9·(1/4 + 2.5²/5)).
func TestFitStandardErrors(t *testing.T) {
	f, err := FitModel(ModelLinear, []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"a", f.Intercept, 0.5}, {"b", *f.Slope, 0.8}, {"rss", f.WeightedRSS, 1.8},
		{"se(b)", *f.SlopeSE, math.Sqrt(0.9 / 5)}, {"se(a)", f.InterceptSE, math.Sqrt(0.9 * (0.25 + 6.25/5))},
	} {
		if !near(c.got, c.want, 1e-12) {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
	// Weights scale out of the coefficients, errors and differences of
	// AICc: all observations weighted 4 give the same a, b and SEs.
	g, err := FitModel(ModelLinear, []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, []float64{4, 4, 4, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !near(g.Intercept, f.Intercept, 1e-12) || !near(*g.SlopeSE, *f.SlopeSE, 1e-12) || !near(g.InterceptSE, f.InterceptSE, 1e-12) {
		t.Errorf("uniform weights changed the fit: %+v vs %+v", g, f)
	}
	c, err := FitModel(ModelConstant, []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Constant: a = mean 2.5, RSS = 5, SE = √((5/3)/4).
	if !near(c.Intercept, 2.5, 1e-12) || !near(c.InterceptSE, math.Sqrt(5.0/3/4), 1e-12) || c.Slope != nil {
		t.Errorf("constant fit %+v", c)
	}
}

// TestAICc: the formula against a hand computation, and its undefined
// cases.
func TestAICc(t *testing.T) {
	// rss 2, n 6, p 2: K = 3, 6·ln(2/6) + 6 + 2·3·4/(6−3−1).
	v, ok := AICc(2, 6, 2)
	if want := 6*math.Log(1.0/3) + 6 + 12; !ok || !near(v, want, 1e-12) {
		t.Errorf("AICc(2, 6, 2) = %v, %v; want %v", v, ok, want)
	}
	if v, ok := AICc(5, 4, 1); !ok || !near(v, 4*math.Log(5.0/4)+4+12.0/1, 1e-12) {
		t.Errorf("AICc(5, 4, 1) = %v, %v", v, ok)
	}
	for _, c := range []struct {
		rss  float64
		n, p int
	}{{1, 4, 2}, {1, 3, 1}, {0, 10, 2}, {math.NaN(), 10, 2}, {math.Inf(1), 10, 1}} {
		if _, ok := AICc(c.rss, c.n, c.p); ok {
			t.Errorf("AICc(%v, %d, %d) defined", c.rss, c.n, c.p)
		}
	}
}

// TestLackOfFit: constant through (1,0) (1,2) (2,10) (2,12): RSS 104,
// pure error 4 on 2 df, lack of fit 100 on 1 df, F = 50; F(1, 2) is T²
// on 2 df, whose two-sided tail at t is 1 − t/√(2 + t²).
func TestLackOfFit(t *testing.T) {
	f, err := FitModel(ModelConstant, []float64{1, 1, 2, 2}, []float64{0, 2, 10, 12}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 - math.Sqrt(50.0/52)
	if f.LackOfFitP == nil || !near(*f.LackOfFitP, want, 1e-9) {
		t.Fatalf("lack-of-fit p = %v, want %v", f.LackOfFitP, want)
	}
	g, err := FitModel(ModelLinear, []float64{1, 2, 3}, []float64{1, 2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.LackOfFitP != nil {
		t.Errorf("no replicates, yet a lack-of-fit p %v", *g.LackOfFitP)
	}
}

func TestFitRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		model string
		n, y  []float64
		w     []float64
	}{
		{"lengths", ModelLinear, []float64{1, 2}, []float64{1}, nil},
		{"too few", ModelLinear, []float64{1, 2}, []float64{1, 2}, nil},
		{"log of zero", ModelLog, []float64{0, 1, 2}, []float64{1, 2, 3}, nil},
		{"one size", ModelLinear, []float64{5, 5, 5}, []float64{1, 2, 3}, nil},
		{"nan", ModelLinear, []float64{1, 2, 3}, []float64{1, math.NaN(), 3}, nil},
		{"zero weight", ModelLinear, []float64{1, 2, 3}, []float64{1, 2, 3}, []float64{1, 0, 1}},
		{"unknown", "cubic", []float64{1, 2, 3}, []float64{1, 2, 3}, nil},
	} {
		if _, err := FitModel(c.model, c.n, c.y, c.w); err == nil {
			t.Errorf("%s: fitted", c.name)
		}
	}
}

// TestChoose: the rule's branches on fits built by hand.
func TestChoose(t *testing.T) {
	fit := func(model string, aicc float64, lof *float64) Fit {
		return Fit{Model: model, AICc: &aicc, LackOfFitP: lof}
	}
	p := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name       string
		fits       []Fit
		sizes      int
		decision   string
		model      string
		candidates int
	}{
		{"clear", []Fit{fit(ModelConstant, 30, p(0)), fit(ModelLinear, 10, p(0.5)), fit(ModelQuadratic, 14.5, p(0.0009))}, 3, Chosen, ModelLinear, 1},
		{"not rejected", []Fit{fit(ModelConstant, 30, p(0)), fit(ModelLinear, 10, p(0.5)), fit(ModelQuadratic, 14.5, p(0.002))}, 3, Indistinguishable, "", 2},
		{"no replicates", []Fit{fit(ModelConstant, 30, nil), fit(ModelLinear, 10, nil)}, 3, InconclusiveFit, "", 0},
		{"close", []Fit{fit(ModelConstant, 30, p(0)), fit(ModelLinear, 10, p(0.5)), fit(ModelNLogN, 11, p(0.4))}, 3, Indistinguishable, "", 2},
		{"just under", []Fit{fit(ModelLinear, 10, p(0.5)), fit(ModelNLogN, 13.99, p(0))}, 4, Indistinguishable, "", 2},
		{"two sizes", []Fit{fit(ModelConstant, 30, nil), fit(ModelLinear, 10, nil)}, 2, InconclusiveFit, "", 0},
		{"one criterion", []Fit{fit(ModelConstant, 30, nil), {Model: ModelLinear}}, 3, InconclusiveFit, "", 0},
		{"lack of fit", []Fit{fit(ModelConstant, 30, nil), fit(ModelLinear, 10, p(0.001))}, 3, InconclusiveFit, "", 0},
	} {
		got := Choose(c.fits, c.sizes, ChooseOptions{})
		if got.Decision != c.decision || got.Model != c.model || len(got.Candidates) != c.candidates || got.Reason == "" {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}
