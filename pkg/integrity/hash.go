package integrity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/flameox/flameox/pkg/fault"
)

// hashJob is one file full validation re-hashes.
type hashJob struct {
	file    string // workspace-relative
	abs     string
	want    string // sha256:<hex>
	size    int64
	subject Ref
	gen     string // the generation of a Parquet file, "" for an artifact
	// supersededBy is the generation that replaced gen, "" for a live one.
	supersededBy string
}

type hashOutcome struct {
	job  hashJob
	got  string
	n    int64
	err  error
	done bool
}

// hashAll re-hashes every stored payload and every HEAD Parquet file that
// the earlier checks left standing, at most workers files at once (default
// GOMAXPROCS): hashing is bound by the disk and one core per file, so
// files in parallel use the cores a single stream leaves idle.
func (s *state) hashAll(ctx context.Context, workers int) error {
	var jobs []hashJob
	for _, id := range sortedKeys(s.objects) {
		o := s.objects[id]
		if o.damaged != "" || o.payload == "" {
			continue
		}
		jobs = append(jobs, hashJob{file: o.rel + "/" + o.content.PayloadName, abs: o.payload, want: id, size: o.content.ByteLength,
			subject: Ref{Type: "artifact", ID: id}})
	}
	live := s.liveFiles()
	for _, t := range sortedKeys(live) {
		for _, lf := range live[t] {
			jobs = append(jobs, hashJob{file: lf.file.Path, abs: lf.abs, want: lf.file.SHA256, size: lf.file.ByteLength,
				subject: Ref{Type: "generation", ID: lf.gen.GenerationID}, gen: lf.gen.GenerationID})
		}
	}
	// Superseded generations' files still on disk (retention removes them
	// once no commit needs them): a missing one is not damage.
	for _, sg := range s.superseded {
		for _, f := range sg.gen.Files {
			abs := filepath.Join(s.root, filepath.FromSlash(f.Path))
			if fi, err := os.Lstat(abs); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			jobs = append(jobs, hashJob{file: f.Path, abs: abs, want: f.SHA256, size: f.ByteLength,
				subject: Ref{Type: "generation", ID: sg.gen.GenerationID}, gen: sg.gen.GenerationID, supersededBy: sg.by})
		}
	}
	// Largest first, so one big file does not start last and run alone.
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].size > jobs[j].size })
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(jobs)))
	out := make([]hashOutcome, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for i := range next {
				got, n, err := hashFile(ctx, jobs[i].abs, buf)
				out[i] = hashOutcome{job: jobs[i], got: got, n: n, err: err, done: true}
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fault.Wrap(fault.ProcessCancelled, err, "validation cancelled")
	}
	for _, o := range out {
		if !o.done {
			continue
		}
		s.res.Checked.BytesHashed += o.n
		j := o.job
		p := Problem{Severity: SeverityError, File: j.file, Subject: &Ref{Type: j.subject.Type, ID: j.subject.ID}, Expected: j.want, Remediation: repairFix}
		switch {
		case o.err != nil:
			p.Code, p.Message = CodeEvidenceUnreadable, fmt.Sprintf("%s cannot be read: %v", j.file, o.err)
			if j.gen == "" {
				p.Code = CodeArtifactMissing
			}
		case o.got != j.want:
			p.Found = o.got
			if j.gen == "" {
				p.Code = CodeArtifactDigest
				p.Message = fmt.Sprintf("the payload of %s (%d bytes) hashes to %s: its bytes changed after they were stored", j.want, o.n, o.got)
			} else {
				p.Code = CodeEvidenceDigest
				p.Message = fmt.Sprintf("%s (%d bytes) hashes to %s; generation %s recorded %s", j.file, o.n, o.got, j.gen, j.want)
				if j.supersededBy != "" {
					p.Message += fmt.Sprintf(" (superseded by generation %s, which holds its rows)", j.supersededBy)
				}
			}
		default:
			continue
		}
		switch {
		case j.gen == "":
			s.objects[j.want].damaged = p.Code
			s.col.add(p)
		case j.supersededBy != "":
			s.supersededBy[j.gen] = j.supersededBy
			s.damagedFiles[p.File] = true
			s.depend("generation", j.gen, Ref{Type: "generation", ID: j.supersededBy, Relation: "supersedes"})
			s.col.add(p)
		default:
			s.addFileProblem(j.gen, p)
		}
	}
	return nil
}

// hashFile returns the sha256:<hex> of a file and its length.
func hashFile(ctx context.Context, path string, buf []byte) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return "", n, err
		}
		k, err := f.Read(buf)
		if k > 0 {
			h.Write(buf[:k])
			n += int64(k)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", n, err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}
