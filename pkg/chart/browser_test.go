package chart

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile"
)

// The pictures in a real browser: Debian's chromium, headless, driven
// through the DevTools protocol over --remote-debugging-pipe (fd 3 and
// 4, NUL-delimited JSON). The pipe needs no port, no polling for
// DevToolsActivePort and no websocket client; a CDP library (chromedp)
// would be a new dependency for the few commands used here. Each page
// must load with no console error, no exception and no request other
// than its own file and data: URLs, the flame graph's search and
// click-to-zoom must work when clicked, and a screenshot must not be
// blank.

// browser is one headless chromium and its DevTools pipe.
type browser struct {
	t    *testing.T
	cmd  *exec.Cmd
	send io.WriteCloser
	mu   sync.Mutex
	next int
	wait map[int]chan cdpMessage
	evs  []cdpMessage
	done chan struct{}
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Unable(t, "chromium", "not installed", "the browser tests load the pictures in Debian's chromium (apt-get install chromium)")
	return ""
}

func startBrowser(t *testing.T, ctx context.Context) *browser {
	bin := chromium(t)
	toChrome, chromeIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--remote-debugging-pipe", "--user-data-dir=" + t.TempDir(),
		"--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--mute-audio",
		// One renderer for a page and its frames, so that a frame's
		// console and requests reach the page's session.
		"--disable-site-isolation-trials", "--disable-features=IsolateOrigins,site-per-process,Translate,MediaRouter",
		"--hide-scrollbars", "--disable-dev-shm-usage", "about:blank"}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // chromium refuses its sandbox to root
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fd 3: chromium reads; fd 4: it writes
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	toChrome.Close()
	fromChrome.Close()
	b := &browser{t: t, cmd: cmd, send: chromeIn, wait: map[int]chan cdpMessage{}, done: make(chan struct{})}
	t.Cleanup(func() {
		chromeIn.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", tail(stderr.String(), 3000))
		}
	})
	go b.read(bufio.NewReader(chromeOut))
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (b *browser) read(r *bufio.Reader) {
	defer close(b.done)
	for {
		line, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(line[:len(line)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.wait[m.ID]; ch != nil {
				ch <- m
				delete(b.wait, m.ID)
			}
		} else {
			b.evs = append(b.evs, m)
		}
		b.mu.Unlock()
	}
}

// call sends one command (to a session, or the browser when session is
// empty) and waits for its result.
func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.wait[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params, "sessionId": session})
	if err != nil {
		return err
	}
	if session == "" {
		msg, _ = json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	}
	if _, err := b.send.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: chromium closed the pipe", method)
	case <-ctx.Done():
		return fmt.Errorf("%s: %v", method, ctx.Err())
	}
}

// events are the events seen so far of a session.
func (b *browser) events(session string) []cdpMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []cdpMessage
	for _, e := range b.evs {
		if e.SessionID == session {
			out = append(out, e)
		}
	}
	return out
}

// page is one tab, attached.
type page struct {
	b       *browser
	session string
	since   int // the events before the last load
}

func (b *browser) open(ctx context.Context, width, height int) *page {
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &tgt); err != nil {
		b.t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true}, &att); err != nil {
		b.t.Fatal(err)
	}
	p := &page{b: b, session: att.SessionID}
	for _, m := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		p.call(ctx, m, map[string]any{}, nil)
	}
	p.call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return p
}

func (p *page) call(ctx context.Context, method string, params, result any) {
	p.b.t.Helper()
	if err := p.b.call(ctx, p.session, method, params, result); err != nil {
		p.b.t.Fatal(err)
	}
}

// load navigates to a file and waits for its load event (which waits
// for its frames).
func (p *page) load(ctx context.Context, path string) {
	p.b.t.Helper()
	before := len(p.b.events(p.session))
	p.since = before
	u := (&url.URL{Scheme: "file", Path: path}).String()
	p.call(ctx, "Page.navigate", map[string]any{"url": u}, nil)
	for {
		for _, e := range p.b.events(p.session)[before:] {
			if e.Method == "Page.loadEventFired" {
				return
			}
		}
		select {
		case <-ctx.Done():
			p.b.t.Fatalf("%s did not load: %v", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// eval evaluates a JavaScript expression and returns its value as JSON.
func (p *page) eval(ctx context.Context, expr string, v any) {
	p.b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	p.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.Exception != nil {
		p.b.t.Fatalf("%s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if err := json.Unmarshal(r.Result.Value, v); err != nil {
		p.b.t.Fatalf("%s: %v (%s)", expr, err, r.Result.Value)
	}
}

// click is a real mouse click (pressed, released) at a point of the
// viewport.
func (p *page) click(ctx context.Context, x, y float64) {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p.call(ctx, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil)
	}
}

// clickOn clicks the middle of the element a selector names.
func (p *page) clickOn(ctx context.Context, selector string) {
	p.b.t.Helper()
	var r struct{ X, Y, W, H float64 }
	p.eval(ctx, `(() => { const r = document.querySelector(`+jsString(selector)+`).getBoundingClientRect();
		return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &r)
	if r.W <= 0 || r.H <= 0 {
		p.b.t.Fatalf("%s is not visible: %+v", selector, r)
	}
	p.click(ctx, r.X+r.W/2, r.Y+r.H/2)
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// problems are the console errors, exceptions and network requests
// (anything but file: and data: URLs) the page has seen.
func (p *page) problems() []string {
	var out []string
	for _, e := range p.b.events(p.session)[p.since:] {
		var x struct {
			Type    string `json:"type"`
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
			Entry struct {
				Level string `json:"level"`
				Text  string `json:"text"`
				URL   string `json:"url"`
			} `json:"entry"`
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		_ = json.Unmarshal(e.Params, &x)
		switch e.Method {
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+x.ExceptionDetails.Text+" "+x.ExceptionDetails.Exception.Description)
		case "Runtime.consoleAPICalled":
			if x.Type == "error" || x.Type == "assert" || x.Type == "warning" {
				out = append(out, fmt.Sprintf("console.%s: %v", x.Type, x.Args))
			}
		case "Log.entryAdded":
			if x.Entry.Level == "error" || x.Entry.Level == "warning" {
				out = append(out, "log "+x.Entry.Level+": "+x.Entry.Text+" "+cut(x.Entry.URL, 100))
			}
		case "Network.requestWillBeSent":
			if u := x.Request.URL; !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") {
				out = append(out, "network request: "+u)
			}
		}
	}
	return out
}

// screenshot captures the viewport and checks it is not blank: some
// colours, and a share of pixels unlike the background.
func (p *page) screenshot(ctx context.Context, save string) {
	p.b.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	p.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	raw, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		p.b.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		p.b.t.Fatalf("the screenshot does not decode: %v", err)
	}
	bg := img.At(0, 0)
	br, bgc, bb, _ := bg.RGBA()
	bounds, other, all := img.Bounds(), 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r != br || g != bgc || b != bb {
				other++
			}
			all++
		}
	}
	if n := colours(img); n < 8 || other*100 < all {
		p.b.t.Errorf("the screenshot looks blank: %d colours, %d of %d sampled pixels unlike the background", n, other, all)
	}
	if save != "" {
		os.WriteFile(save, raw, 0o644)
	}
}

// flameSVG draws the sample profile's flame graph.
func flameSVG(t *testing.T, icicle bool) []byte {
	f, err := os.Open("testdata/google-pprof__sample.cpu.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prof, err := profile.Parse(f, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	si, err := profile.SampleIndex(prof.P, "")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := profile.FlameTree(prof.P, si)
	var buf bytes.Buffer
	if _, err := profile.WriteFlameGraph(&buf, root, profile.FlameOptions{Title: "Flame Graph", Unit: prof.P.SampleType[si].Unit, Icicle: icicle}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBrowser(t *testing.T) {
	chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir, save := t.TempDir(), os.Getenv("FLAMEOX_CHART_OUT")
	shot := func(name string) string {
		if save == "" {
			return ""
		}
		return filepath.Join(save, name+".screenshot.png")
	}
	flame := flameSVG(t, false)
	cmp, err := Comparison(sampleComparison(), SVG)
	if err != nil {
		t.Fatal(err)
	}
	report, err := Page(sampleReport(), Pictures{Experiments: []ExperimentPictures{{Comparison: cmp, Effects: sampleComparison().Effects,
		EffectSets:  [][2]string{{"rs-" + strings.Repeat("a", 32), "rs-" + strings.Repeat("b", 32)}},
		ScalingNote: "no scaling picture: none declared",
		Flames:      []Flame{{Variant: "base", RunID: sampleRun, ArtifactID: "sha256:" + strings.Repeat("c", 64), SVG: flame}}}},
		Cited: []Flame{{Variant: "cited", RunID: citedRun, ArtifactID: "sha256:" + strings.Repeat("f", 64), SVG: flame}}})
	if err != nil {
		t.Fatal(err)
	}
	// A page with every fault the checks look for, to show they see them:
	// a request, a console error, and an exception in a data URL frame.
	frame := base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>throw new Error("in the frame")</script></svg>`))
	bad := []byte(`<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"><script>console.error("an error")</script>` +
		`<iframe sandbox="allow-scripts" src="data:image/svg+xml;base64,` + frame + `"></iframe></body></html>`)
	// The report with its policy's script hash spoiled: the flame graph's
	// script is refused, which the checks must see (so the real page's
	// silence means the script ran).
	spoiled := bytes.Replace(report, []byte("script-src &#39;sha256-"), []byte("script-src &#39;sha256-AAAA"), 1)
	if bytes.Equal(spoiled, report) {
		t.Fatal("the report's policy names no script hash")
	}
	files := map[string][]byte{"flame.svg": flame, "icicle.svg": flameSVG(t, true), "comparison.svg": cmp, "report.html": report, "bad.html": bad, "spoiled.html": spoiled}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := startBrowser(t, ctx)

	t.Run("checks see faults", func(t *testing.T) {
		b.t = t
		p := b.open(ctx, 800, 600)
		p.load(ctx, filepath.Join(dir, "bad.html"))
		got := strings.Join(p.problems(), "\n")
		for _, want := range []string{"network request: http://127.0.0.1:9/x.png", "console.error", "in the frame"} {
			if !strings.Contains(got, want) {
				t.Errorf("the checks miss %q on a faulty page; they saw:\n%s", want, got)
			}
		}
		p.load(ctx, filepath.Join(dir, "spoiled.html"))
		if got := p.problems(); len(got) == 0 {
			t.Error("a report whose policy refuses the flame graph's script loads without a problem")
		}
	})
	for _, name := range []string{"flame", "icicle"} {
		t.Run(name, func(t *testing.T) {
			b.t = t
			p := b.open(ctx, 1300, 900)
			p.load(ctx, filepath.Join(dir, name+".svg"))
			// Search: the Search button asks for a regular expression.
			var frames int
			p.eval(ctx, `window.prompt = () => "busyLoop"; document.querySelectorAll("g.f").length`, &frames)
			p.clickOn(ctx, "#search")
			var s struct {
				Matched string
				N       int
			}
			p.eval(ctx, `({Matched: document.getElementById("matched").textContent, N: document.querySelectorAll("g.f.match").length})`, &s)
			if s.N == 0 || !strings.HasPrefix(s.Matched, "Matched: ") || s.Matched == "Matched: 0.0%" {
				t.Errorf("search for busyLoop: %d frames matched, %q", s.N, s.Matched)
			}
			// Click-to-zoom: a narrow frame, clicked, fills the width.
			var z struct {
				Sel    string
				W, Max float64
			}
			p.eval(ctx, `(() => {
			const svg = document.documentElement, pad = +svg.getAttribute("data-pad"), W = +svg.getAttribute("width") - 2 * pad;
			const gs = Array.from(document.querySelectorAll("g.f"));
			const i = gs.findIndex(g => { const r = g.querySelector("rect").getBoundingClientRect();
				return +g.getAttribute("data-d") >= 2 && r.width > 20 && r.width < W / 3 && r.bottom < innerHeight && r.top > 0; });
			gs.forEach((g, j) => g.setAttribute("data-test", j));
			return {Sel: i < 0 ? "" : "g.f[data-test='" + i + "'] rect", W: i < 0 ? 0 : +gs[i].querySelector("rect").getAttribute("width"), Max: W};
		})()`, &z)
			if z.Sel == "" {
				t.Fatal("no narrow frame in view to zoom into")
			}
			p.clickOn(ctx, z.Sel)
			var after struct {
				W            float64
				Hidden       int
				ResetVisible bool
			}
			p.eval(ctx, `({W: +document.querySelector(`+jsString(z.Sel)+`).getAttribute("width"), Hidden: document.querySelectorAll("g.f.hidden").length,
			ResetVisible: !document.getElementById("reset").classList.contains("hidden")})`, &after)
			if after.W < z.Max-0.5 || after.Hidden == 0 || !after.ResetVisible {
				t.Errorf("zoom: frame %g px wide of %g after the click (was %g), %d frames hidden, reset shown %v", after.W, z.Max, z.W, after.Hidden, after.ResetVisible)
			}
			p.screenshot(ctx, shot(name))
			p.clickOn(ctx, "#reset")
			var reset float64
			p.eval(ctx, `+document.querySelector(`+jsString(z.Sel)+`).getAttribute("width")`, &reset)
			if reset != z.W {
				t.Errorf("reset zoom: the frame is %g px wide, was %g", reset, z.W)
			}
			for _, pr := range p.problems() {
				t.Error(pr)
			}
		})
	}
	t.Run("comparison", func(t *testing.T) {
		b.t = t
		p := b.open(ctx, 900, 700)
		p.load(ctx, filepath.Join(dir, "comparison.svg"))
		var texts []string
		p.eval(ctx, `Array.from(document.querySelectorAll("text")).map(t => t.textContent)`, &texts)
		if !strings.Contains(strings.Join(texts, "\n"), "<script>alert(1)</script>") {
			t.Errorf("the hostile benchmark name is not drawn as text: %q", texts)
		}
		var scripts int
		p.eval(ctx, `document.querySelectorAll("script").length`, &scripts)
		if scripts != 0 {
			t.Errorf("%d script elements in the comparison plot", scripts)
		}
		p.screenshot(ctx, shot("comparison"))
		for _, pr := range p.problems() {
			t.Error(pr)
		}
	})
	t.Run("report", func(t *testing.T) {
		b.t = t
		p := b.open(ctx, 1280, 1000)
		p.load(ctx, filepath.Join(dir, "report.html"))
		var r struct {
			Question      string
			Scripts       int
			Frames        int
			Broken        []string
			Numbers       int
			PlotSVG, Anch int
		}
		p.eval(ctx, `(() => {
			const links = Array.from(document.querySelectorAll('a[href^="#"]'));
			const broken = links.map(a => decodeURIComponent(a.getAttribute("href").slice(1))).filter(id => !document.getElementById(id));
			return {Question: document.querySelector("h1").textContent, Scripts: document.querySelectorAll("script").length,
				Frames: document.querySelectorAll("iframe.flame").length, Broken: broken,
				Numbers: document.querySelectorAll("a.num").length, PlotSVG: document.querySelectorAll(".plot svg").length, Anch: links.length};
		})()`, &r)
		if r.Question != sampleQuestion {
			t.Errorf("the question reads %q, want %q as text", r.Question, sampleQuestion)
		}
		if r.Scripts != 0 || r.Frames != 2 || r.PlotSVG != 1 || r.Numbers == 0 || len(r.Broken) > 0 {
			t.Errorf("report: %d scripts (want 0), %d flame frames (want 2), %d plots (want 1), %d numbers, links to missing ids %q", r.Scripts, r.Frames, r.PlotSVG, r.Numbers, r.Broken)
		}
		p.screenshot(ctx, shot("report"))
		for _, pr := range p.problems() {
			t.Error(pr)
		}
	})
}
