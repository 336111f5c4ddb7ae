package chart

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/stats"
)

func f(x float64) *float64 { return &x }

// sampleComparison is two benchmarks of two variants, values around
// their medians, with a hostile benchmark name.
func sampleComparison() *ComparisonChart {
	return &ComparisonChart{Title: "old vs new", Axis: "value / baseline median (sec/op)", Confidence: 0.95, Threshold: 0.05,
		Rows: []Row{
			{Name: "Scan", Samples: []Sample{
				{Variant: "old", Values: []float64{0.98, 1, 1.01, 1.02, 0.99, 1}, Center: f(1), Lo: f(0.98), Hi: f(1.02)},
				{Variant: "new", Values: []float64{0.9, 0.91, 0.89, 0.9, 0.92, 0.9}, Center: f(0.9), Lo: f(0.89), Hi: f(0.92)}}},
			{Name: "<script>alert(1)</script>\x01&", Samples: []Sample{
				{Variant: "old", Values: []float64{1, 1}, Center: f(1)},
				{Variant: "new", Values: []float64{1.1}}}},
		},
		Effects: []Effect{{Name: "Scan", Ratio: 0.9, Lo: 0.88, Hi: 0.92, Decision: "meaningful_improvement"}}}
}

func sampleScaling() *ScalingChart {
	lin := Curve{Model: stats.ModelLinear, Intercept: 0, Slope: f(2), Best: true, DeltaAICc: f(0),
		Sizes: []float64{1, 2, 4, 8}, Residuals: []float64{0.01, -0.01, 0.005, 0}}
	con := Curve{Model: stats.ModelConstant, Intercept: 7.5, DeltaAICc: f(30),
		Sizes: []float64{1, 2, 4, 8}, Residuals: []float64{-0.7, -0.5, 0.1, 1.1}}
	var obs, med []Point
	for _, n := range []float64{1, 2, 4, 8} {
		for _, e := range []float64{0.99, 1, 1.01} {
			obs = append(obs, Point{X: n, Y: 2 * n * e})
		}
		med = append(med, Point{X: n, Y: 2 * n})
	}
	return &ScalingChart{Title: "t", Parameter: "n", Metric: "gobench.sec/op", Unit: "sec/op",
		Series: []ScalingSeries{{Name: "base", Observations: obs, Medians: med, Fits: []Curve{con, lin}, Min: 1, Max: 8, Choice: "chosen linear"}}}
}

// checkPicture asserts the bytes are a well-formed SVG (every token
// parses as XML) or a PNG that decodes to a picture of some size.
func checkPicture(t *testing.T, format string, b []byte) {
	t.Helper()
	switch format {
	case SVG:
		d := xml.NewDecoder(bytes.NewReader(b))
		root := ""
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("the SVG is not XML: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		if root != "svg" || len(b) < 2000 {
			t.Fatalf("root element %q, %d bytes: not a drawn SVG", root, len(b))
		}
	case PNG:
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("the PNG does not decode: %v", err)
		}
		if r := img.Bounds(); r.Dx() < 300 || r.Dy() < 150 || colours(img) < 4 {
			t.Fatalf("PNG %v with %d colours: not a drawn picture", r, colours(img))
		}
	}
}

// colours counts the distinct colours of img, up to 64.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bb, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bb, a}] = true
			if len(seen) >= 64 {
				return len(seen)
			}
		}
	}
	return len(seen)
}

func TestPictures(t *testing.T) {
	dir := os.Getenv("FLAMEOX_CHART_OUT") // set to look at the pictures
	for _, tc := range []struct {
		name string
		draw func(format string) ([]byte, error)
	}{
		{"comparison", func(format string) ([]byte, error) { return Comparison(sampleComparison(), format) }},
		{"comparison-no-effects", func(format string) ([]byte, error) {
			c := sampleComparison()
			c.Effects = nil
			return Comparison(c, format)
		}},
		{"scaling", func(format string) ([]byte, error) { return Scaling(sampleScaling(), format) }},
	} {
		for _, format := range []string{SVG, PNG} {
			t.Run(tc.name+"."+format, func(t *testing.T) {
				b, err := tc.draw(format)
				if err != nil {
					t.Fatal(err)
				}
				checkPicture(t, format, b)
				if format == SVG && tc.name == "comparison" {
					if bytes.Contains(b, []byte("<script")) || !bytes.Contains(b, []byte("&lt;script&gt;")) {
						t.Error("a benchmark named <script> is not escaped text in the SVG")
					}
				}
				if dir != "" {
					os.WriteFile(filepath.Join(dir, tc.name+"."+format), b, 0o644)
				}
			})
		}
	}
}

func TestPictureRefusals(t *testing.T) {
	many := &ComparisonChart{}
	for range MaxLines + 1 {
		many.Rows = append(many.Rows, Row{Name: "x", Samples: []Sample{{Variant: "a", Values: []float64{1}}}})
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"empty comparison", func() error { _, err := Comparison(&ComparisonChart{}, SVG); return err }(), "nothing to draw"},
		{"too many lines", func() error { _, err := Comparison(many, SVG); return err }(), "more than 60"},
		{"empty scaling", func() error { _, err := Scaling(&ScalingChart{}, PNG); return err }(), "nothing to draw"},
		{"bad extension", func() error { _, err := FormatOf("x.pdf"); return err }(), `not ".pdf"`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a\x00b\x1bc", "a\uFFFDb\uFFFDc"},
		{"abcdefghijklmnop", "abcd…mnop"},
	} {
		if got := label(tc.in, 9); got != tc.want {
			t.Errorf("label(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
