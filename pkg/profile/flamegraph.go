package profile

import (
	"bufio"
	"cmp"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// The flame graph: FlameGraph.pl's picture (Brendan Gregg's), written as
// one self-contained SVG with its own script for search and click-to-zoom,
// so it opens offline in any browser. No maintained Go package draws one
// (pprof's web UI serves a flame graph from a server; inferno is Rust);
// the drawing is a few rectangles, so it is written here.

// FlameNode is one frame of the merged call tree: the samples whose
// stacks run through the same frames from the root to it.
type FlameNode struct {
	Name     string
	Module   string // the function's package (Go), module (Python) or mapping
	Value    int64  // inclusive: the samples through it
	Self     int64
	Children []*FlameNode
	// Base is the frame's value in the base profile of a differential
	// flame graph (FlameDiff), with HasBase set; the width stays Value.
	Base    int64
	HasBase bool
}

// FlameDiff marks cand's tree with base's values, path by path (the same
// frames from the root), as FlameGraph's difffolded.pl does: the picture
// is the candidate's, coloured by how each frame changed. A frame only in
// base is not drawn (the candidate spent nothing there); the result says
// how much base value that leaves out.
func FlameDiff(base, cand *FlameNode) (gone int64) {
	var mark func(b, c *FlameNode)
	mark = func(b, c *FlameNode) {
		c.HasBase = true
		c.Base = b.Value
		byName := map[string]*FlameNode{}
		for _, k := range c.Children {
			byName[k.Name] = k
		}
		for _, k := range b.Children {
			if m := byName[k.Name]; m != nil {
				mark(k, m)
			} else {
				gone += k.Value
			}
		}
	}
	mark(base, cand)
	var zero func(c *FlameNode)
	zero = func(c *FlameNode) {
		if !c.HasBase {
			c.HasBase = true // new in the candidate: base 0
		}
		for _, k := range c.Children {
			zero(k)
		}
	}
	zero(cand)
	return gone
}

// FlameTree merges the stacks of sample type si into a tree under a root
// named "all" (FlameGraph.pl's name for it), children by value, largest
// first. Non-positive values are left out.
func FlameTree(p *profile.Profile, si int) (*FlameNode, int) {
	root := &FlameNode{Name: "all"}
	// One index for the whole tree, keyed by parent and interned frame
	// name, and each location's frames named once: a map per node and a
	// string hash per frame per sample were most of the time (and the
	// garbage) of a large profile's tree. Nodes come from slabs.
	type edge struct {
		parent *FlameNode
		frame  int32
	}
	index := make(map[edge]*FlameNode, len(p.Sample))
	ft := frameTable{ids: map[string]int32{}, locs: map[*profile.Location][]frameRef{}}
	var slab []FlameNode
	skipped := 0
	for _, s := range p.Sample {
		v := s.Value[si]
		if v <= 0 {
			skipped++
			continue
		}
		n := root
		n.Value += v
		for i := len(s.Location) - 1; i >= 0; i-- {
			for _, f := range ft.location(s.Location[i]) {
				c := index[edge{n, f.id}]
				if c == nil {
					if len(slab) == 0 {
						slab = make([]FlameNode, 1024)
					}
					c, slab = &slab[0], slab[1:]
					c.Name, c.Module = ft.names[f.id], f.module
					index[edge{n, f.id}] = c
					n.Children = append(n.Children, c)
				}
				c.Value += v
				n = c
			}
		}
		n.Self += v
	}
	var sortTree func(n *FlameNode)
	sortTree = func(n *FlameNode) {
		slices.SortFunc(n.Children, func(a, b *FlameNode) int {
			return cmp.Or(cmp.Compare(b.Value, a.Value), strings.Compare(a.Name, b.Name))
		})
		for _, c := range n.Children {
			sortTree(c)
		}
	}
	sortTree(root)
	return root, skipped
}

// frameTable names each location's frames once, root-most first (a
// location's inlined lines are listed innermost first), each name
// interned to an id.
type frameTable struct {
	ids   map[string]int32
	names []string
	locs  map[*profile.Location][]frameRef
}

// frameRef is one frame of a location: its interned name and its module.
type frameRef struct {
	id     int32
	module string
}

func (t *frameTable) location(loc *profile.Location) []frameRef {
	if ids, ok := t.locs[loc]; ok {
		return ids
	}
	mod := ""
	if loc.Mapping != nil {
		mod = loc.Mapping.File
	}
	var ids []frameRef
	if len(loc.Line) == 0 {
		ids = append(ids, frameRef{t.id(fmt.Sprintf("0x%x", loc.Address)), mod})
	}
	for j := len(loc.Line) - 1; j >= 0; j-- {
		name := "?"
		if f := loc.Line[j].Function; f != nil && f.Name != "" {
			name = f.Name
		}
		ids = append(ids, frameRef{t.id(name), packageOf(name, mod)})
	}
	t.locs[loc] = ids
	return ids
}

// id interns a frame name.
func (t *frameTable) id(name string) int32 {
	if id, ok := t.ids[name]; ok {
		return id
	}
	id := int32(len(t.names))
	t.ids[name] = id
	t.names = append(t.names, name)
	return id
}

// packageOf is the part of a function name that names its package or
// module: "net/http.(*Server).Serve" → "net/http", "mod.func" → "mod";
// else the mapping.
func packageOf(name, mapping string) string {
	i := strings.LastIndex(name, "/")
	if j := strings.Index(name[i+1:], "."); j > 0 {
		return name[:i+1+j]
	}
	if j := strings.Index(name, "::"); j > 0 {
		return name[:j]
	}
	return mapping
}

// FlameOptions shape the picture.
type FlameOptions struct {
	Title    string
	Subtitle string
	Unit     string // the sample type's unit, for the tooltips
	Width    int    // pixels; 1200 by default
	Icicle   bool   // root at the top (an icicle graph) instead of the bottom
	// MinWidth drops frames narrower than this many pixels (FlameGraph.pl's
	// --minwidth, 0.1 by default; negative keeps every frame): they cannot
	// be seen and only make the file large. Their value stays in their
	// parent's.
	MinWidth float64
}

const (
	frameHeight = 16
	flameTop    = 54 // title, subtitle and search line
	flameBottom = 24 // the details line
	fontSize    = 12
	charWidth   = 0.59 * fontSize // Verdana's average, as FlameGraph.pl assumes
)

// FlameStats says what a flame graph drew.
type FlameStats struct {
	Frames  int   `json:"frames"`
	Omitted int   `json:"omitted"` // frames narrower than MinWidth
	Depth   int   `json:"depth"`
	Total   int64 `json:"total"`
	Skipped int   `json:"skipped"`
}

// WriteFlameGraph draws root as an SVG flame graph. Every frame is a
// <g class="f"> with data-v (its inclusive value, exact), data-s (self)
// and a <title> (name, value, share); its rect's width is data-v over the
// root's value times the drawing width. Names are escaped XML text.
func WriteFlameGraph(w io.Writer, root *FlameNode, o FlameOptions) (FlameStats, error) {
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.MinWidth == 0 {
		o.MinWidth = 0.1
	}
	st := FlameStats{Total: root.Value}
	const pad = 10.0
	drawW := float64(o.Width) - 2*pad
	// Depth first, to size the picture.
	var depth func(n *FlameNode, d int) int
	depth = func(n *FlameNode, d int) int {
		m := d
		for _, c := range n.Children {
			if root.Value > 0 && float64(c.Value)/float64(root.Value)*drawW < o.MinWidth {
				continue
			}
			m = max(m, depth(c, d+1))
		}
		return m
	}
	st.Depth = depth(root, 0) + 1
	height := flameTop + st.Depth*frameHeight + flameBottom
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" data-total="%d" data-unit="%s" data-icicle="%t" data-pad="%g">
<style>
text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }
.f rect { stroke: #fff; stroke-width: 0.5; }
.f:hover rect { stroke: #000; }
.f text { pointer-events: none; }
.hidden { display: none; }
.match rect { fill: #e040e0 !important; }
#title { font-size: 17px; }
#details, #matched, #search, #reset { font-size: 12px; }
#search, #reset { cursor: pointer; fill: #05a; }
</style>
<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f4"/>
`, o.Width, height, o.Width, height, root.Value, xmlText(o.Unit), o.Icicle, pad, fontSize)
	fmt.Fprintf(bw, `<text id="title" x="%d" y="22" text-anchor="middle">%s</text>
<text id="subtitle" x="%d" y="40" text-anchor="middle">%s</text>
<text id="reset" x="%g" y="40" class="hidden">Reset zoom</text>
<text id="search" x="%g" y="22" text-anchor="end">Search</text>
<text id="matched" x="%g" y="40" text-anchor="end"></text>
<text id="details" x="%g" y="%d"> </text>
<g id="frames">
`, o.Width/2, xmlText(o.Title), o.Width/2, xmlText(o.Subtitle), pad, float64(o.Width)-pad, float64(o.Width)-pad, pad, height-8)
	var draw func(n *FlameNode, x float64, d int) error
	draw = func(n *FlameNode, x float64, d int) error {
		wpx := 0.0
		if root.Value > 0 {
			wpx = float64(n.Value) / float64(root.Value) * drawW
		}
		y := flameTop + (st.Depth-1-d)*frameHeight
		if o.Icicle {
			y = flameTop + d*frameHeight
		}
		share := 0.0
		if root.Value > 0 {
			share = 100 * float64(n.Value) / float64(root.Value)
		}
		fill, base, delta := color(n), "", ""
		if n.HasBase {
			fill = diffColor(n, root)
			base = fmt.Sprintf(` data-b="%d"`, n.Base)
			delta = fmt.Sprintf(", %+d from %d", n.Value-n.Base, n.Base)
		}
		fmt.Fprintf(bw, `<g class="f" data-v="%d" data-s="%d" data-d="%d"%s><title>%s (%d %s, %.2f%%%s)</title><rect x="%.3f" y="%d" width="%.3f" height="%d" fill="%s"/><text x="%.3f" y="%d">%s</text></g>
`, n.Value, n.Self, d, base, xmlText(n.Name), n.Value, xmlText(o.Unit), share, delta, pad+x, y, wpx, frameHeight-1, fill, pad+x+3, y+frameHeight-4, xmlText(fit(n.Name, wpx)))
		st.Frames++
		cx := x
		for _, c := range n.Children {
			cw := 0.0
			if root.Value > 0 {
				cw = float64(c.Value) / float64(root.Value) * drawW
			}
			if cw < o.MinWidth {
				st.Omitted += count(c)
				cx += cw
				continue
			}
			if err := draw(c, cx, d+1); err != nil {
				return err
			}
			cx += cw
		}
		return nil
	}
	if err := draw(root, 0, 0); err != nil {
		return st, err
	}
	bw.WriteString("</g>\n<script><![CDATA[\n" + flameScript + "]]></script>\n</svg>\n")
	return st, bw.Flush()
}

func count(n *FlameNode) int {
	c := 1
	for _, k := range n.Children {
		c += count(k)
	}
	return c
}

// fit cuts a name to the characters that fit in w pixels ("" when not
// even two do), as FlameGraph.pl does; the script refits after a zoom.
func fit(name string, w float64) string {
	n := int((w - 6) / charWidth)
	if n < 3 {
		return ""
	}
	r := []rune(name)
	if len(r) <= n {
		return name
	}
	return string(r[:n-2]) + ".."
}

// xmlText escapes s for XML text and attributes; control characters,
// which XML 1.0 forbids, become U+FFFD.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r < 0x20 && r != '\t', r == 0x7f, r == 0xfffe, r == 0xffff:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// color is FlameGraph.pl's warm palette, the hue fixed by the frame's
// module so one package keeps one colour across the picture.
func color(n *FlameNode) string {
	h := fnv.New32a()
	h.Write([]byte(cmp.Or(n.Module, n.Name)))
	v := h.Sum32()
	r := 205 + v%50
	g := (v >> 8) % 230
	b := (v >> 16) % 55
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
}

// diffColor is red for a frame that grew, blue for one that shrank, white
// for one that did not, saturated by the change as a share of the larger
// root (difffolded.pl's scheme).
func diffColor(n, root *FlameNode) string {
	scale := float64(max(root.Value, root.Base, 1))
	d := float64(n.Value-n.Base) / scale
	k := int(min(1, 5*max(d, -d)) * 200)
	if d > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", 255-k, 255-k)
	}
	if d < 0 {
		return fmt.Sprintf("rgb(%d,%d,255)", 255-k, 255-k)
	}
	return "rgb(250,250,250)"
}

// flameScript is the SVG's own script: hover details, click to zoom into
// a frame (its ancestors stay, full width), reset, and search by regular
// expression (matches highlighted, their share without double counting
// nested matches). It uses only the DOM of the SVG itself.
const flameScript = `
(function () {
  var svg = document.documentElement, frames = document.getElementById("frames");
  var total = +svg.getAttribute("data-total"), unit = svg.getAttribute("data-unit");
  var pad = +svg.getAttribute("data-pad"), W = +svg.getAttribute("width") - 2 * pad;
  var details = document.getElementById("details"), reset = document.getElementById("reset");
  var all = Array.prototype.slice.call(frames.querySelectorAll("g.f"));
  all.forEach(function (g) {
    var r = g.querySelector("rect");
    g._x = +r.getAttribute("x") - pad; g._w = +r.getAttribute("width");
    g._d = +g.getAttribute("data-d"); g._name = g.querySelector("title").textContent.replace(/ \([^(]*\)$/, "");
    g.addEventListener("mouseover", function () { details.textContent = g.querySelector("title").textContent; });
    g.addEventListener("mouseout", function () { details.textContent = " "; });
    g.addEventListener("click", function () { zoom(g); });
  });
  function fit(g, w) {
    var t = g.querySelector("text"), n = Math.floor((w - 6) / (0.59 * 12)), s = g._name;
    t.textContent = n < 3 ? "" : (s.length <= n ? s : s.slice(0, n - 2) + "..");
  }
  function zoom(z) {
    var x0 = z._x, w0 = z._w;
    all.forEach(function (g) {
      var r = g.querySelector("rect"), t = g.querySelector("text");
      var inside = g._x >= x0 - 1e-6 && g._x + g._w <= x0 + w0 + 1e-6 && g._d >= z._d;
      var ancestor = g._d < z._d && g._x <= x0 + 1e-6 && g._x + g._w >= x0 + w0 - 1e-6;
      if (!inside && !ancestor) { g.classList.add("hidden"); return; }
      g.classList.remove("hidden");
      var x = ancestor ? 0 : (g._x - x0) * W / w0, w = ancestor ? W : g._w * W / w0;
      r.setAttribute("x", pad + x); r.setAttribute("width", w);
      t.setAttribute("x", pad + x + 3); fit(g, w);
    });
    reset.classList.remove("hidden");
  }
  reset.addEventListener("click", function () {
    all.forEach(function (g) {
      var r = g.querySelector("rect"), t = g.querySelector("text");
      g.classList.remove("hidden"); r.setAttribute("x", pad + g._x); r.setAttribute("width", g._w);
      t.setAttribute("x", pad + g._x + 3); fit(g, g._w);
    });
    reset.classList.add("hidden");
  });
  document.getElementById("search").addEventListener("click", function () {
    var term = prompt("Search (regular expression)", "");
    if (term === null) return;
    search(term);
  });
  function search(term) {
    var re = null, matched = 0, spans = [];
    try { re = term ? new RegExp(term) : null; } catch (e) { re = null; }
    all.forEach(function (g) {
      var m = re !== null && re.test(g._name);
      g.classList.toggle("match", m);
      if (m) spans.push([g._x, g._x + g._w, +g.getAttribute("data-v")]);
    });
    spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var end = -1;
    spans.forEach(function (s) { if (s[0] >= end - 1e-6) { matched += s[2]; end = s[1]; } });
    document.getElementById("matched").textContent = re ? "Matched: " + (total ? (100 * matched / total).toFixed(1) : "0") + "%" : "";
  }
  window.flameSearch = search;
  window.flameZoom = function (i) { zoom(all[i]); };
})();
`
