package chart

import (
	"bytes"
	"html"
	"strings"
	"testing"
)

// FuzzPageText: whatever a person typed as the question and a finding's
// title, the page holds it as text only: no element starts from it, and
// the heading reads back as the question.
func FuzzPageText(f *testing.F) {
	for _, s := range []string{sampleQuestion, "plain", "</h1><script>alert(1)</script>", "\"><img src=x onerror=alert(1)>",
		"<!--", "]]>", "<svg onload=x>", "&amp;&lt;", "\x00\x1b[31m"} {
		f.Add(s, s)
	}
	clean, err := Page(sampleReport(), Pictures{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, question, title string) {
		r := sampleReport()
		r.Investigation.Question = question
		r.Findings[0].Title = title
		b, err := Page(r, Pictures{})
		if err != nil {
			t.Fatal(err)
		}
		if n, want := bytes.Count(b, []byte("<")), bytes.Count(clean, []byte("<")); n != want {
			t.Fatalf("the page has %d tags, the same page with plain text %d: text became markup", n, want)
		}
		i := bytes.Index(b, []byte(`<h1 id="question">`))
		j := bytes.Index(b[i:], []byte("</h1>"))
		if i < 0 || j < 0 {
			t.Fatal("no heading")
		}
		// html/template writes NUL as U+FFFD.
		want := strings.ReplaceAll(question, "\x00", "\uFFFD")
		if got := html.UnescapeString(string(b[i+len(`<h1 id="question">`) : i+j])); got != want && got != strings.ToValidUTF8(want, "\uFFFD") {
			t.Fatalf("the heading reads %q, the question is %q", got, question)
		}
	})
}
