package chart

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Point is one measured value at one input size.
type Point struct {
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	ID string  `json:"id,omitempty"` // the run (or trial) it was read from
}

// Curve is one fitted model: y = a + b·g(n) (stats.Growth), drawn over
// the measured range only, with its relative residuals at the sizes.
type Curve struct {
	Model     string    `json:"model"`
	Formula   string    `json:"formula"`
	Intercept float64   `json:"intercept"`
	Slope     *float64  `json:"slope,omitempty"`
	DeltaAICc *float64  `json:"delta_aicc,omitempty"`
	Sizes     []float64 `json:"sizes"`
	Residuals []float64 `json:"residuals"`
	// Best marks the chosen model (or, with no choice, the lowest AICc):
	// drawn solid, the others dashed.
	Best bool `json:"best"`
}

// At is the curve's value at n; ok is false where the model is undefined.
func (c Curve) At(n float64) (float64, bool) {
	g, ok := stats.Growth(c.Model, n)
	if !ok {
		return 0, false
	}
	y := c.Intercept
	if c.Slope != nil {
		y += *c.Slope * g
	}
	return y, true
}

// ScalingSeries is one variant over the input sizes.
type ScalingSeries struct {
	Name         string  `json:"name"`
	Observations []Point `json:"observations"`
	Medians      []Point `json:"medians"`
	Fits         []Curve `json:"fits"`
	Min          float64 `json:"measured_min"`
	Max          float64 `json:"measured_max"`
	Choice       string  `json:"choice"`
}

// ScalingChart is what render scaling draws: per series, the values and
// per-size medians with every fitted model (left) and each model's
// relative residuals (right).
type ScalingChart struct {
	Title     string          `json:"title"`
	Parameter string          `json:"parameter"`
	Metric    string          `json:"metric"`
	Unit      string          `json:"unit"`
	Series    []ScalingSeries `json:"series"`
}

// MaxSeries bounds the series one scaling picture draws.
const MaxSeries = 12

// Scaling draws c as SVG or PNG.
func Scaling(c *ScalingChart, format string) ([]byte, error) {
	if len(c.Series) == 0 {
		return nil, fault.New(fault.NotFound, "nothing to draw: the experiment has no series with values")
	}
	if len(c.Series) > MaxSeries {
		return nil, fault.New(fault.InvalidArguments, "%d series, more than %d: pick one (--variant)", len(c.Series), MaxSeries)
	}
	rows := make([][]*plot.Plot, 0, len(c.Series))
	for _, s := range c.Series {
		left, err := fitsPlot(c, s)
		if err != nil {
			return nil, err
		}
		right, err := residualsPlot(c, s)
		if err != nil {
			return nil, err
		}
		rows = append(rows, []*plot.Plot{left, right})
	}
	return tiled(rows, 10*vg.Inch, 3*vg.Inch*vg.Length(len(rows))+vg.Inch/2, format)
}

// logX is whether the sizes span enough to draw them on a log axis.
func logX(s ScalingSeries) bool { return s.Min > 0 && s.Max/s.Min >= 50 }

func modelStyle(i int, best bool) draw.LineStyle {
	ls := draw.LineStyle{Color: colorOf(i + 1), Width: vg.Points(1)}
	if best {
		ls.Width = vg.Points(2.5)
	} else {
		ls.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return ls
}

func fitsPlot(c *ScalingChart, s ScalingSeries) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = label(fmt.Sprintf("%s: %s", s.Name, s.Choice), 80)
	p.X.Label.Text = label(c.Parameter, 40)
	p.Y.Label.Text = label(c.Metric+" ("+c.Unit+")", 60)
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks{}, ticks{}
	if logX(s) {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	obs := make(plotter.XYs, 0, len(s.Observations))
	for _, o := range s.Observations {
		if finite(o.X) && finite(o.Y) && (!logX(s) || o.X > 0) {
			obs = append(obs, plotter.XY{X: o.X, Y: o.Y})
		}
	}
	if len(obs) > 0 {
		sc, err := plotter.NewScatter(obs)
		if err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "draw %s's values", s.Name)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: faded(colorOf(0)), Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		p.Legend.Add("trial", sc)
	}
	med := make(plotter.XYs, 0, len(s.Medians))
	for _, m := range s.Medians {
		if finite(m.X) && finite(m.Y) && (!logX(s) || m.X > 0) {
			med = append(med, plotter.XY{X: m.X, Y: m.Y})
		}
	}
	if len(med) > 0 {
		sc, err := plotter.NewScatter(med)
		if err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "draw %s's medians", s.Name)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: draw.BoxGlyph{}}
		p.Add(sc)
		p.Legend.Add("median", sc)
	}
	for i, f := range s.Fits {
		f := f
		fn := plotter.NewFunction(func(x float64) float64 {
			y, ok := f.At(x)
			if !ok {
				return math.NaN()
			}
			return y
		})
		fn.XMin, fn.XMax, fn.Samples = s.Min, s.Max, 64
		fn.LineStyle = modelStyle(i, f.Best)
		p.Add(fn)
		name := f.Model
		if f.DeltaAICc != nil {
			name += fmt.Sprintf(" (ΔAICc %.1f)", *f.DeltaAICc)
		}
		p.Legend.Add(name, fn)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p, nil
}

func residualsPlot(c *ScalingChart, s ScalingSeries) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "relative residuals (y − ŷ)/ŷ"
	p.X.Label.Text = label(c.Parameter, 40)
	p.Y.Label.Text = "%"
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks{}, ticks{}
	if logX(s) {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: s.Min, Y: 0}, {X: s.Max, Y: 0}})
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "draw the zero line")
	}
	zero.LineStyle = draw.LineStyle{Color: color.Gray{Y: 100}, Width: vg.Points(1)}
	p.Add(zero)
	for i, f := range s.Fits {
		pts := make(plotter.XYs, 0, len(f.Residuals))
		for j, r := range f.Residuals {
			if j < len(f.Sizes) && finite(r) && finite(f.Sizes[j]) {
				pts = append(pts, plotter.XY{X: f.Sizes[j], Y: 100 * r})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "draw %s's residuals", f.Model)
		}
		l.LineStyle = modelStyle(i, f.Best)
		sc.GlyphStyle = draw.GlyphStyle{Color: colorOf(i + 1), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(l, sc)
		p.Legend.Add(f.Model, l, sc)
	}
	// The scale is the plausible models' (the best and those within
	// plausibleDelta AICc of it): a model far off, whose residuals are
	// many times the others', would flatten theirs to a line.
	lo, hi := -5.0, 5.0
	var far []float64
	for _, f := range s.Fits {
		plausible := f.Best || (f.DeltaAICc != nil && *f.DeltaAICc <= plausibleDelta)
		for _, r := range f.Residuals {
			if !finite(r) {
				continue
			}
			if plausible {
				lo, hi = math.Min(lo, 100*r), math.Max(hi, 100*r)
			} else {
				far = append(far, 100*r)
			}
		}
	}
	if slices.ContainsFunc(far, func(r float64) bool { return r < lo || r > hi }) {
		pad := (hi - lo) * 0.15
		p.Y.Min, p.Y.Max = lo-pad, hi+pad
		p.Title.Text += fmt.Sprintf(" (scale of the models within ΔAICc %g)", plausibleDelta)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p, nil
}

// plausibleDelta is the AICc difference within which a model still has
// support (Burnham & Anderson: beyond 10, essentially none).
const plausibleDelta = 10.0
