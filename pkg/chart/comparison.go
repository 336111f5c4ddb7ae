package chart

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sample is one variant's values of one row: the values, drawn as points,
// and their center (the median) with its interval, drawn as a bar.
type Sample struct {
	Variant string    `json:"variant"`
	Values  []float64 `json:"values"`
	Center  *float64  `json:"center,omitempty"`
	Lo      *float64  `json:"lo,omitempty"`
	Hi      *float64  `json:"hi,omitempty"`
	// IDs are the runs the values come from, in the order of Values when
	// there is one value per run.
	IDs []string `json:"ids,omitempty"`
}

// Row is one benchmark (or one metric) across the variants.
type Row struct {
	Name    string   `json:"name"`
	Note    string   `json:"note,omitempty"` // the delta and decision
	Samples []Sample `json:"samples"`
}

// Effect is one comparison's ratio, candidate over baseline, with its
// interval.
type Effect struct {
	Name     string  `json:"name"`
	Ratio    float64 `json:"ratio"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Decision string  `json:"decision"`
}

// ComparisonChart is what render comparison draws: one line per row and
// variant with the values and the center's interval, and, when there are
// effects, a second panel with each ratio's interval against the
// practical threshold.
type ComparisonChart struct {
	Title      string   `json:"title"`
	Axis       string   `json:"axis"`
	Rows       []Row    `json:"rows"`
	Effects    []Effect `json:"effects,omitempty"`
	Threshold  float64  `json:"threshold"`
	Confidence float64  `json:"confidence"`
}

// Picture bounds: a chart draws at most this many lines, and the
// height grows with them.
const (
	MaxLines   = 60
	chartWidth = 7 * vg.Inch
	lineHeight = vg.Inch * 28 / 100
)

// Comparison draws c as SVG or PNG.
func Comparison(c *ComparisonChart, format string) ([]byte, error) {
	lines := 0
	for _, r := range c.Rows {
		lines += len(r.Samples)
	}
	if lines == 0 {
		return nil, fault.New(fault.NotFound, "nothing to draw: no values on either side")
	}
	if lines > MaxLines {
		return nil, fault.New(fault.InvalidArguments, "%d lines to draw, more than %d: narrow the comparison (--filter)", lines, MaxLines)
	}
	top, err := distributions(c, lines)
	if err != nil {
		return nil, err
	}
	topH := vg.Inch + lineHeight*vg.Length(lines)
	if len(c.Effects) == 0 {
		return stacked([]*plot.Plot{top}, []vg.Length{topH}, format)
	}
	eff, err := effects(c)
	if err != nil {
		return nil, err
	}
	return stacked([]*plot.Plot{top, eff}, []vg.Length{topH, vg.Inch + lineHeight*vg.Length(len(c.Effects)+1)}, format)
}

// lineName is the label of one row's variant.
func lineName(r Row, s Sample, rows int) string {
	if rows == 1 {
		return label(s.Variant, 40)
	}
	return label(r.Name, 40) + " · " + label(s.Variant, 14)
}

// commonPrefix is the part up to a '/' that every row's name starts
// with (a benchmark's name, when the rows are its sub-benchmarks), so
// the labels show what differs.
func commonPrefix(rows []Row) string {
	if len(rows) < 2 {
		return ""
	}
	p := rows[0].Name
	for _, r := range rows[1:] {
		for !strings.HasPrefix(r.Name, p) {
			p = p[:len(p)-1]
		}
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return ""
}

func distributions(c *ComparisonChart, lines int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = label(c.Title, 100)
	prefix := commonPrefix(c.Rows)
	if prefix != "" {
		p.Title.Text += " · " + label(prefix, 60)
	}
	p.X.Label.Text = label(c.Axis, 100)
	p.X.Tick.Marker = ticks{}
	names := make([]string, lines)
	variants := map[string]int{}
	k := 0
	for _, r := range c.Rows {
		for _, s := range r.Samples {
			y := float64(lines - 1 - k) // the first line at the top
			r.Name = strings.TrimPrefix(r.Name, prefix)
			names[lines-1-k] = lineName(r, s, len(c.Rows))
			vi, ok := variants[s.Variant]
			if !ok {
				vi = len(variants)
				variants[s.Variant] = vi
			}
			col := colorOf(vi)
			pts := make(plotter.XYs, 0, len(s.Values))
			for i, v := range s.Values {
				if !finite(v) {
					continue
				}
				// A deterministic jitter (the golden ratio's fractional
				// steps) keeps equal values apart, the same every time.
				j := math.Mod(float64(i)*0.618034, 1) - 0.5
				pts = append(pts, plotter.XY{X: v, Y: y + 0.5*j})
			}
			if len(pts) > 0 {
				sc, err := plotter.NewScatter(pts)
				if err != nil {
					return nil, fault.Wrap(fault.InternalError, err, "draw %s", s.Variant)
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: faded(col), Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
				p.Add(sc)
			}
			if s.Center != nil && finite(*s.Center) {
				if s.Lo != nil && s.Hi != nil && finite(*s.Lo) && finite(*s.Hi) {
					eb, err := plotter.NewXErrorBars(errorBar{x: *s.Center, y: y, lo: *s.Center - *s.Lo, hi: *s.Hi - *s.Center})
					if err != nil {
						return nil, fault.Wrap(fault.InternalError, err, "draw %s's interval", s.Variant)
					}
					eb.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(2)}
					eb.CapWidth = vg.Points(8)
					p.Add(eb)
				}
				m, err := plotter.NewScatter(plotter.XYs{{X: *s.Center, Y: y}})
				if err != nil {
					return nil, fault.Wrap(fault.InternalError, err, "draw %s's median", s.Variant)
				}
				m.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(4), Shape: draw.PyramidGlyph{}}
				p.Add(m)
			}
			k++
		}
	}
	p.NominalY(names...)
	p.Y.Padding = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p, nil
}

func effects(c *ComparisonChart) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("candidate / baseline, %g%% interval; practical threshold ±%g%%", c.Confidence*100, c.Threshold*100)
	p.X.Label.Text = "ratio"
	p.X.Tick.Marker = ticks{}
	n := len(c.Effects)
	names := make([]string, n)
	lo, hi := 1.0, 1.0
	for i, e := range c.Effects {
		y := float64(n - 1 - i)
		names[n-1-i] = label(e.Name, 40)
		col := effectColor(e.Decision)
		if finite(e.Lo) && finite(e.Hi) {
			eb, err := plotter.NewXErrorBars(errorBar{x: e.Ratio, y: y, lo: e.Ratio - e.Lo, hi: e.Hi - e.Ratio})
			if err != nil {
				return nil, fault.Wrap(fault.InternalError, err, "draw %s's interval", e.Name)
			}
			eb.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(2)}
			eb.CapWidth = vg.Points(8)
			p.Add(eb)
			lo, hi = math.Min(lo, e.Lo), math.Max(hi, e.Hi)
		}
		if finite(e.Ratio) {
			m, err := plotter.NewScatter(plotter.XYs{{X: e.Ratio, Y: y}})
			if err != nil {
				return nil, fault.Wrap(fault.InternalError, err, "draw %s", e.Name)
			}
			m.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
			p.Add(m)
		}
	}
	span := func(x float64, dash bool) error {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: -0.5}, {X: x, Y: float64(n) - 0.5}})
		if err != nil {
			return fault.Wrap(fault.InternalError, err, "draw the reference line")
		}
		l.LineStyle = draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1)}
		if dash {
			l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		return nil
	}
	if err := span(1, false); err != nil {
		return nil, err
	}
	if c.Threshold > 0 {
		for _, x := range []float64{1 - c.Threshold, 1 + c.Threshold} {
			if err := span(x, true); err != nil {
				return nil, err
			}
		}
		lo, hi = math.Min(lo, 1-c.Threshold), math.Max(hi, 1+c.Threshold)
	}
	pad := (hi - lo) * 0.08
	p.X.Min, p.X.Max = lo-pad, hi+pad
	p.NominalY(names...)
	p.Y.Padding = vg.Points(8)
	return p, nil
}

// effectColor colours a ratio by its decision: green an improvement,
// red a regression, grey anything else.
func effectColor(decision string) color.RGBA {
	switch decision {
	case "meaningful_improvement":
		return color.RGBA{0, 140, 70, 255}
	case "meaningful_regression":
		return color.RGBA{200, 30, 30, 255}
	}
	return color.RGBA{90, 90, 90, 255}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// errorBar is one point with its interval, for plotter.NewXErrorBars.
type errorBar struct{ x, y, lo, hi float64 }

func (e errorBar) Len() int                      { return 1 }
func (e errorBar) XY(int) (float64, float64)     { return e.x, e.y }
func (e errorBar) XError(int) (float64, float64) { return e.lo, e.hi }

// stacked draws plots one above the other, each as high as its height.
func stacked(plots []*plot.Plot, heights []vg.Length, format string) ([]byte, error) {
	var total vg.Length
	for _, h := range heights {
		total += h
	}
	c, err := draw.NewFormattedCanvas(chartWidth, total, format)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "picture format %s", format)
	}
	dc := draw.New(c)
	top := total
	for i, p := range plots {
		sub := dc
		sub.Rectangle = vg.Rectangle{Min: vg.Point{X: 0, Y: top - heights[i]}, Max: vg.Point{X: chartWidth, Y: top}}
		p.Draw(draw.Crop(sub, vg.Millimeter*2, -vg.Millimeter*4, vg.Millimeter*2, -vg.Millimeter*2))
		top -= heights[i]
	}
	return encode(c, format)
}
