package profile

import (
	"bytes"
	"encoding/xml"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

type svgFrame struct {
	Class string  `xml:"class,attr"`
	V     int64   `xml:"data-v,attr"`
	D     int     `xml:"data-d,attr"`
	Title string  `xml:"title"`
	Rect  svgRect `xml:"rect"`
}

type svgRect struct {
	X     float64 `xml:"x,attr"`
	Width float64 `xml:"width,attr"`
}

type svgDoc struct {
	Width  float64 `xml:"width,attr"`
	Total  int64   `xml:"data-total,attr"`
	Pad    float64 `xml:"data-pad,attr"`
	Frames struct {
		G []svgFrame `xml:"g"`
	} `xml:"g"`
}

func readFixture(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := Parse(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p.P
}

// TestFlameGraph parses the SVG: every frame's width is its value over the
// total times the drawing width, children fit in their parent, and per
// function the value of its outermost frames (recursion counted once)
// equals go tool pprof's cum (profile.Top).
func TestFlameGraph(t *testing.T) {
	for _, fx := range []string{"testdata/google-pprof__sample.cpu.pb.gz", "testdata/parca__alloc_objects.pb.gz", "testdata/cs336-basics__py-spy-0.4.2.speedscope.json"} {
		t.Run(fx, func(t *testing.T) {
			p := readFixture(t, fx)
			si, _ := SampleIndex(p, "")
			root, _ := FlameTree(p, si)
			var buf bytes.Buffer
			st, err := WriteFlameGraph(&buf, root, FlameOptions{Title: "t", Width: 1000, MinWidth: -1})
			if err != nil {
				t.Fatal(err)
			}
			var doc svgDoc
			if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatalf("not XML: %v", err)
			}
			total, _ := Totals(p, si)
			if doc.Total != total || root.Value != total || len(doc.Frames.G) != st.Frames || st.Omitted != 0 {
				t.Fatalf("total %d (svg %d, root %d), %d frames (stats %d, omitted %d)", total, doc.Total, root.Value, len(doc.Frames.G), st.Frames, st.Omitted)
			}
			drawW := doc.Width - 2*doc.Pad
			// Frames are written depth first: a frame's ancestors precede it.
			type open struct {
				name string
				x, w float64
				d    int
			}
			var stack []open
			outer := map[string]int64{}
			for i, g := range doc.Frames.G {
				want := float64(g.V) / float64(total) * drawW
				if math.Abs(g.Rect.Width-want) > 0.001 {
					t.Fatalf("frame %d (%s): width %.3f, want %.3f", i, g.Title, g.Rect.Width, want)
				}
				for len(stack) > 0 && stack[len(stack)-1].d >= g.D {
					stack = stack[:len(stack)-1]
				}
				name := g.Title[:strings.LastIndex(g.Title, " (")]
				if len(stack) > 0 {
					par := stack[len(stack)-1]
					if g.Rect.X < par.x-0.001 || g.Rect.X+g.Rect.Width > par.x+par.w+0.002 || g.D != par.d+1 {
						t.Fatalf("frame %d (%s) outside its parent %+v", i, g.Title, par)
					}
				}
				if g.D > 0 {
					rec := false
					for _, a := range stack[1:] {
						rec = rec || a.name == name
					}
					if !rec {
						outer[name] += g.V
					}
				}
				stack = append(stack, open{name, g.Rect.X, g.Rect.Width, g.D})
			}
			for _, r := range Top(p, si, nil) {
				if r.Unsymbolized || strings.HasPrefix(r.Function, "<") {
					continue
				}
				if outer[r.Function] != r.Cum {
					t.Errorf("%s: flame graph %d, pprof cum %d", r.Function, outer[r.Function], r.Cum)
				}
			}
		})
	}
}

// TestFlameGraphEscapes: names are text, never markup; the one script is
// the SVG's own.
func TestFlameGraphEscapes(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: `<script>alert("x")</script> & "q"` + "\x1b[31m"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}, Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{5}}, {Location: []*profile.Location{loc}, Value: []int64{-2}}}}
	root, skipped := FlameTree(p, 0)
	var buf bytes.Buffer
	if _, err := WriteFlameGraph(&buf, root, FlameOptions{Title: "<b>t</b>", Width: 400}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if strings.Count(svg, "<script") != 1 || strings.Contains(svg, "<b>") || !strings.Contains(svg, "&lt;script&gt;alert(&quot;x&quot;)") || strings.Contains(svg, "\x1b") {
		t.Fatalf("not escaped:\n%s", svg[:min(len(svg), 3000)])
	}
	if skipped != 1 || root.Value != 5 {
		t.Fatalf("skipped %d, root %d", skipped, root.Value)
	}
	var doc svgDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Frames.G) != 2 || doc.Frames.G[1].V != 5 || !strings.HasPrefix(doc.Frames.G[1].Title, `<script>alert("x")</script> & "q"`) {
		t.Fatalf("%+v", doc.Frames.G)
	}
}

// TestFlameDiff: the candidate's picture, each frame marked with its base
// value along the same frames from the root: grew red, shrank blue, same
// white; what ran only in the base is counted, not drawn.
func TestFlameDiff(t *testing.T) {
	mk := func(stacks map[string]int64) *profile.Profile {
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}}
		fns := map[string]*profile.Location{}
		loc := func(name string) *profile.Location {
			if l := fns[name]; l != nil {
				return l
			}
			f := &profile.Function{ID: uint64(len(fns) + 1), Name: name}
			l := &profile.Location{ID: f.ID, Line: []profile.Line{{Function: f}}}
			fns[name] = l
			p.Function = append(p.Function, f)
			p.Location = append(p.Location, l)
			return l
		}
		for st, v := range stacks {
			names := strings.Split(st, ";")
			var locs []*profile.Location
			for i := len(names) - 1; i >= 0; i-- {
				locs = append(locs, loc(names[i]))
			}
			p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{v}})
		}
		return p
	}
	base, _ := FlameTree(mk(map[string]int64{"main;a": 10, "main;b": 5, "main;d": 2}), 0)
	cand, _ := FlameTree(mk(map[string]int64{"main;a": 4, "main;b": 5, "main;c": 3}), 0)
	if gone := FlameDiff(base, cand); gone != 2 {
		t.Fatalf("gone %d, want 2 (main;d)", gone)
	}
	var buf bytes.Buffer
	if _, err := WriteFlameGraph(&buf, cand, FlameOptions{Width: 600, MinWidth: -1}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Frames struct {
			G []struct {
				B     *int64 `xml:"data-b,attr"`
				V     int64  `xml:"data-v,attr"`
				Title string `xml:"title"`
				Rect  struct {
					Fill string `xml:"fill,attr"`
				} `xml:"rect"`
			} `xml:"g"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]any{}
	for _, g := range doc.Frames.G {
		if g.B == nil {
			t.Fatalf("%s has no data-b", g.Title)
		}
		got[g.Title[:strings.Index(g.Title, " (")]] = [2]any{*g.B, g.Rect.Fill}
	}
	for name, want := range map[string]struct {
		base int64
		hue  string
	}{"a": {10, "blue"}, "b": {5, "white"}, "c": {0, "red"}, "main": {17, "blue"}, "all": {17, "blue"}} {
		g, ok := got[name]
		if !ok || g[0] != want.base {
			t.Errorf("%s: %v, want base %d", name, g, want.base)
			continue
		}
		fill := g[1].(string)
		hue := map[bool]string{true: "red"}[strings.HasPrefix(fill, "rgb(255,")]
		if strings.HasSuffix(fill, ",255)") && !strings.HasPrefix(fill, "rgb(255,") {
			hue = "blue"
		}
		if fill == "rgb(250,250,250)" {
			hue = "white"
		}
		if hue != want.hue {
			t.Errorf("%s: fill %s, want %s", name, fill, want.hue)
		}
	}
}
