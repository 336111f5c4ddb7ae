package chart

import (
	"bytes"
	"image/color"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/flameox/flameox/pkg/fault"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Picture formats, chosen by the output's extension.
const (
	SVG = "svg"
	PNG = "png"
)

// FormatOf is the picture format of an output file: .svg or .png.
func FormatOf(output string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(output)); ext {
	case ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	default:
		return "", fault.New(fault.InvalidArguments, "%s: a picture is written as .svg or .png, not %q", output, ext).With("field", "output")
	}
}

// palette is one colour per variant, the first the baseline's: Okabe and
// Ito's colour-blind-safe set.
var palette = []color.RGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermillion
	{0, 158, 115, 255},   // bluish green
	{204, 121, 167, 255}, // reddish purple
	{230, 159, 0, 255},   // orange
	{86, 180, 233, 255},  // sky blue
	{120, 120, 120, 255}, // grey
	{240, 228, 66, 255},  // yellow
}

func colorOf(i int) color.RGBA { return palette[i%len(palette)] }

// faded is c lighter, for the raw values behind a center.
func faded(c color.RGBA) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: 140}
}

// label makes text safe to draw: control characters (invalid in XML
// even escaped) become U+FFFD, and long names are cut in the middle.
// gonum's SVG canvas escapes the rest.
func label(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF {
			return '\uFFFD'
		}
		return r
	}, s)
	if r := []rune(s); max > 3 && len(r) > max {
		h := (max - 1) / 2
		s = string(r[:h]) + "…" + string(r[len(r)-(max-1-h):])
	}
	return s
}

// tiled draws plots in a grid (rows of plots, each row as long) on one
// canvas of the format, the axes of each column aligned.
func tiled(rows [][]*plot.Plot, w, h vg.Length, format string) ([]byte, error) {
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "picture format %s", format)
	}
	t := draw.Tiles{Rows: len(rows), Cols: len(rows[0]), PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	dc := draw.New(c)
	cs := plot.Align(rows, t, dc)
	for i, row := range rows {
		for j, p := range row {
			if p != nil {
				p.Draw(cs[i][j])
			}
		}
	}
	return encode(c, format)
}

// encode writes a drawn canvas out.
func encode(c vg.CanvasWriterTo, format string) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "encode the %s picture", format)
	}
	return buf.Bytes(), nil
}

// stripProlog is an SVG without its XML declaration and comment, for
// inlining into HTML.
func stripProlog(svg []byte) []byte {
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		return svg[i:]
	}
	return svg
}

// ticks are gonum's default tick positions labelled with up to four
// significant digits (the default's fixed precision can print 1.04 as 1
// on a narrow range).
type ticks struct{}

func (ticks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 4, 64)
		}
	}
	return ts
}
