package profile

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// speedscopeSums decodes the file on its own and returns, per profile name,
// the number of samples and the summed weights in integer nanoseconds.
func speedscopeSums(t *testing.T, data []byte) (n, ns map[string]int64) {
	var doc struct {
		Profiles []struct {
			Name, Unit string
			Samples    [][]int
			Weights    []float64
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	n, ns = map[string]int64{}, map[string]int64{}
	for _, p := range doc.Profiles {
		if p.Unit != "seconds" {
			t.Fatalf("fixture unit %q, test expects seconds", p.Unit)
		}
		n[p.Name] += int64(len(p.Samples))
		for _, w := range p.Weights {
			ns[p.Name] += int64(math.Round(w * 1e9))
		}
	}
	return n, ns
}

func TestSpeedscopeSampledPerThread(t *testing.T) {
	for _, tc := range []struct {
		file, producer string
		threads        int
	}{
		{"testdata/cs336-basics__py-spy-0.4.2.speedscope.json", "py-spy 0.4.2", 4},
		{"testdata/self-driving-sim__py-spy-0.4.1.speedscope.json", "py-spy 0.4.1", 2},
		{"speedscope/voronoi-pp__py-spy-0.4.1.speedscope.json", "py-spy 0.4.1", 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := tc.file
			if !strings.HasPrefix(path, "testdata/") {
				path = shared(t, path)
			}
			p := parseFile(t, path)
			if p.Format != FormatSpeedscope || p.Producer != tc.producer {
				t.Fatalf("format %s producer %q", p.Format, p.Producer)
			}
			wantN, wantNS := speedscopeSums(t, readPlain(t, path))
			gotN := labelTotals(t, p, "samples", "thread")
			gotNS := labelTotals(t, p, "time", "thread")
			if len(gotN) != tc.threads || len(wantN) != tc.threads {
				t.Fatalf("threads: got %d, file %d, want %d", len(gotN), len(wantN), tc.threads)
			}
			for name := range wantN {
				if gotN[name] != wantN[name] || gotNS[name] != wantNS[name] {
					t.Errorf("%s: %d samples / %d ns, file has %d / %d", name, gotN[name], gotNS[name], wantN[name], wantNS[name])
				}
			}
			if u := p.P.SampleType[mustIndex(t, p, "time")].Unit; u != "nanoseconds" {
				t.Errorf("time unit %q", u)
			}
			ti := mustIndex(t, p, "time")
			for name := range gotNS { // Top's filter keeps threads apart
				var flat, want int64
				for _, s := range p.P.Sample {
					if s.Label["thread"][0] == name && len(s.Location) > 0 { // py-spy writes some empty stacks
						want += s.Value[ti]
					}
				}
				for _, r := range Top(p.P, ti, func(s *profile.Sample) bool { return s.Label["thread"][0] == name }) {
					flat += r.Flat
				}
				if flat != want || want == 0 {
					t.Errorf("%s: Top filtered to the thread sums flat %d, its non-empty samples %d", name, flat, want)
				}
			}
			tids := map[int64]bool{}
			for _, s := range p.P.Sample {
				tids[s.NumLabel["thread_id"][0]] = true
			}
			if len(tids) != tc.threads {
				t.Errorf("%d distinct thread_id labels, want %d", len(tids), tc.threads)
			}
			withSource := 0
			for _, l := range p.P.Location {
				if fn := l.Line[0].Function; fn.Filename != "" && l.Line[0].Line > 0 {
					withSource++
				}
			}
			if withSource == 0 {
				t.Error("no Python frame kept its file and line")
			}
		})
	}
}

func TestSpeedscopeEventedDurations(t *testing.T) {
	p := parseFile(t, shared(t, "speedscope/calmcode__pyinstrument.speedscope.json"))
	if len(p.P.SampleType) != 1 || p.P.SampleType[0].Type != "time" || p.P.SampleType[0].Unit != "nanoseconds" {
		t.Fatalf("sample types %v", p.P.SampleType)
	}
	if p.Producer != "pyinstrument" {
		t.Errorf("producer %q", p.Producer)
	}
	// All four frames open at 0 and close at 3.7775120999431238 s.
	const want = 3777512100
	if got := total(t, p, "time"); got != want {
		t.Fatalf("total %d ns, want %d", got, want)
	}
	rows := Top(p.P, 0, nil)
	if rows[0].Function != "sleep" || rows[0].Flat != want || rows[0].File != "<built-in>" {
		t.Errorf("top row %+v", rows[0])
	}
	for _, r := range rows {
		if r.Cum != want {
			t.Errorf("row %+v: cum should be the whole duration", r)
		}
	}
	if !strings.Contains(strings.Join(p.Limitations, "\n"), "evented") {
		t.Errorf("limitations do not say evented: %v", p.Limitations)
	}
}

func TestSpeedscopeEventedNesting(t *testing.T) {
	doc := `{"$schema":"` + speedscopeSchema + `","shared":{"frames":[{"name":"a"},{"name":"b"}]},
	"profiles":[{"type":"evented","name":"t","unit":"milliseconds","startValue":0,"endValue":10,"events":[
	{"type":"O","at":0,"frame":0},{"type":"O","at":2,"frame":1},{"type":"C","at":5,"frame":1},
	{"type":"O","at":6,"frame":1},{"type":"C","at":7,"frame":1},{"type":"C","at":10,"frame":0}]}]}`
	p, err := Parse(strings.NewReader(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, r := range Top(p.P, 0, nil) {
		got[r.Function] = [2]int64{r.Flat, r.Cum}
	}
	if got["a"] != [2]int64{6e6, 10e6} || got["b"] != [2]int64{4e6, 4e6} {
		t.Errorf("flat/cum %v", got)
	}
}
