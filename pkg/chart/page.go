package chart

// pageHTML is the report page: one file, its style inline, no script of
// its own and nothing fetched (the flame graphs' frames are data URLs).
// Every number is a link to the row of the ids it was read from.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<title>{{.R.Investigation.Question}} · flameox report</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: .5em 0; } th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.n, a.num { font-variant-numeric: tabular-nums; }
code, .id { font: 12px ui-monospace, monospace; } .note { color: #666; } .plot svg { max-width: 100%; height: auto; }
iframe.flame { width: 100%; height: 560px; border: 1px solid #ddd; }
tr:target { background: #fff3b0; } a.num { text-decoration: none; border-bottom: 1px dotted #05a; color: #05a; }
</style>
</head>
<body>
<header>
<h1 id="question">{{.R.Investigation.Question}}</h1>
<p>Investigation <a class="id" href="#{{.R.Investigation.InvestigationID}}">{{.R.Investigation.InvestigationID}}</a>, {{.R.Investigation.Status}},
opened {{.R.Investigation.CreatedAt.Format "2006-01-02 15:04:05Z"}}.
Every number is read at corpus commit <code>{{.R.CorpusCommitID}}</code> and links to the ids it comes from.</p>
{{with .R.Investigation.Symptom}}<p>Symptom: {{.}}</p>{{end}}
</header>

<section id="hypotheses">
<h2>Hypotheses</h2>
{{range .R.Hypotheses}}
<div class="hypothesis">
<p><strong>{{.Claim}}</strong> (<a class="id" href="#{{.HypothesisID}}">{{.HypothesisID}}</a>, revision {{.Revision}}, {{.Assessment}}, {{.Lifecycle}})</p>
<ul>{{with .Prediction}}<li>prediction: {{.}}</li>{{end}}{{with .DiscriminatingCondition}}<li>discriminating condition: {{.}}</li>{{end}}</ul>
</div>
{{else}}<p class="note">None recorded.</p>{{end}}
</section>

{{range $e := .Experiments}}
<section class="experiment" id="experiment-{{$e.ExperimentID}}">
<h2>Experiment <span class="id">{{$e.ExperimentID}}</span></h2>
<ul>
<li>decision rule: {{$e.Estimand}} of <code>{{$e.PrimaryMetric}}</code> ({{$e.Polarity}}), practical threshold {{fixed $e.PracticalThreshold}}, confidence {{fixed $e.ConfidenceLevel}}</li>
<li>design <code>{{$e.DesignID}}</code>, seed {{$e.RandomSeed}}; workload definition <code>{{$e.WorkloadDefinition}}</code>, measurement protocol <code>{{$e.ProtocolID}}</code></li>
{{with $e.HypothesisID}}<li>tests hypothesis <a class="id" href="#{{.}}">{{.}}</a></li>{{end}}
</ul>
<table class="variants">
<tr><th>variant</th><th>parameters</th>{{range $e.Outcomes}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $v := $e.Variants}}<tr><td>{{$v.Name}}</td><td><code>{{$v.Parameters}}</code></td>{{range index $e.VariantCounts $i}}<td class="n"><a class="num" href="#trials-{{$e.ExperimentID}}" data-value="{{.}}">{{.}}</a></td>{{end}}</tr>
{{end}}</table>
<p>Run sets: {{range $e.RunSets}}<a class="id" href="#{{.RunSetID}}">{{.RunSetID}}</a> ({{.MemberCount}} runs) {{end}}</p>

<h3>Comparison</h3>
{{if $e.Comparison}}<div class="plot comparison">{{$e.Comparison}}</div>{{end}}
{{with $e.ComparisonNote}}<p class="note">{{.}}</p>{{end}}
{{if $e.Effects}}<table class="effects">
<tr><th>candidate / baseline</th><th>ratio</th><th>interval</th><th>decision</th><th>run sets</th></tr>
{{range $e.Effects}}<tr><td>{{.Name}}</td><td class="n"><a class="num" href="#{{.Ratio.Ref}}" data-value="{{.Ratio.Value}}">{{.Ratio.Text}}</a></td>
<td class="n">[<a class="num" href="#{{.Lo.Ref}}" data-value="{{.Lo.Value}}">{{.Lo.Text}}</a>, <a class="num" href="#{{.Hi.Ref}}" data-value="{{.Hi.Value}}">{{.Hi.Text}}</a>]</td>
<td>{{.Decision}}</td><td><a class="id" href="#{{.Baseline}}">{{.Baseline}}</a> → <a class="id" href="#{{.Candidate}}">{{.Candidate}}</a></td></tr>
{{end}}</table>{{end}}

<h3>Scaling</h3>
{{if $e.Scaling}}<div class="plot scaling">{{$e.Scaling}}</div>{{end}}
{{with $e.ScalingNote}}<p class="note">{{.}}</p>{{end}}

<h3>Flame graphs</h3>
{{range $e.Flames}}<figure>
<figcaption>{{.Variant}}: run <a class="id" href="#{{.RunID}}">{{.RunID}}</a>, profile <a class="id" href="#{{.ArtifactID}}">{{.ArtifactID}}</a></figcaption>
<iframe class="flame" sandbox="allow-scripts" title="flame graph of run {{.RunID}}" src="{{.Src}}"></iframe>
</figure>
{{else}}<p class="note">No succeeded run of this experiment carries a profile.</p>{{end}}

<h3 id="trials-{{$e.ExperimentID}}">Trials ({{$e.TrialsTotal}}{{if or $e.TrialsTruncated $e.TrialsCut}}; the first {{len $e.Trials}} listed{{end}})</h3>
<table class="trials">
<tr><th>block</th><th>order</th><th>variant</th><th>outcome</th><th>run</th><th>why</th></tr>
{{range $e.Trials}}<tr><td>{{.BlockID}}</td><td>{{with .OrderInBlock}}{{.}}{{end}}</td><td>{{.Variant}}</td><td>{{.Outcome}}</td>
<td>{{with .RunID}}<a class="id" href="#{{.}}">{{.}}</a>{{end}}</td><td>{{.ExclusionReason}}</td></tr>
{{end}}</table>
</section>
{{end}}

<section id="comparisons">
<h2>Recorded comparisons</h2>
{{if .Comparisons}}<table class="comparisons">
<tr><th>comparison</th><th>metric</th><th>change</th><th>interval</th><th>decision</th><th>validity</th><th>pairs</th><th>baseline</th><th>candidate</th></tr>
{{range .Comparisons}}<tr>
<td><a class="id" href="#{{.ComparisonID}}">{{.ComparisonID}}</a></td><td><code>{{.Metric}}</code> {{.Polarity}}</td>
<td class="n"><a class="num" data-field="relative_change" href="#{{.Change.Ref}}" data-value="{{.Change.Value}}">{{.Change.Text}}</a></td>
<td class="n">[<a class="num" data-field="confidence_low" href="#{{.Low.Ref}}" data-value="{{.Low.Value}}">{{.Low.Text}}</a>, <a class="num" data-field="confidence_high" href="#{{.High.Ref}}" data-value="{{.High.Value}}">{{.High.Text}}</a>]</td>
<td>{{.Decision}}</td><td>{{.Validity}}</td>
<td class="n"><a class="num" data-field="complete_pair_n" href="#{{.Pairs.Ref}}" data-value="{{.Pairs.Value}}">{{.Pairs.Text}}</a></td>
<td><a class="id" href="#{{.BaselineRunSetID}}">{{.BaselineRunSetID}}</a> {{.BaselineAttempted}}/{{.BaselineEligible}}/{{.BaselineFailed}}/{{.BaselineExcluded}}</td>
<td><a class="id" href="#{{.CandidateRunSetID}}">{{.CandidateRunSetID}}</a> {{.CandidateAttempted}}/{{.CandidateEligible}}/{{.CandidateFailed}}/{{.CandidateExcluded}}</td>
</tr>{{range .Mismatches}}<tr><td colspan="9" class="note">mismatch: {{.}}</td></tr>{{end}}
{{end}}</table>
<p class="note">Sides: attempted/eligible/failed/excluded runs.</p>
{{else}}<p class="note">None recorded.</p>{{end}}
</section>

<section id="analyses">
<h2>Analyses</h2>
{{range .R.Analyses}}<p><strong>{{.Recipe}}</strong> {{.RecipeVersion}} <a class="id" href="#{{.AnalysisID}}">{{.AnalysisID}}</a> over {{.InputRuns}} runs at <code>{{.CorpusCommitID}}</code>{{with .ResultArtifactID}}, result <a class="id" href="#{{.}}">{{.}}</a>{{end}}</p>
{{range .Limitations}}<p class="note">limitation: {{.}}</p>{{end}}
{{else}}<p class="note">None recorded.</p>{{end}}
</section>

<section id="findings">
<h2>Findings</h2>
{{range .R.Findings}}<div class="finding">
<p><strong>{{.Title}}</strong> (<a class="id" href="#{{.FindingID}}">{{.FindingID}}</a>, revision {{.Revision}}): {{.Claim}}</p>
<p>{{.Kind}}, evidence level {{.EvidenceLevel}}, confidence {{.Confidence}}, {{.Assessment}}, {{.Lifecycle}}.
{{if .Evidence}}Cites {{range .Evidence}}{{.Type}} <a class="id" href="#{{.ID}}">{{.ID}}</a> ({{.Relation}}) {{end}}{{end}}</p>
{{range .Limitations}}<p class="note">limitation: {{.}}</p>{{end}}
</div>
{{else}}<p class="note">None recorded.</p>{{end}}
{{with .Cited}}<h3>Flame graphs of what the findings cite</h3>
{{range .}}<figure>
<figcaption>{{.Variant}}: run <a class="id" href="#{{.RunID}}">{{.RunID}}</a>, profile <a class="id" href="#{{.ArtifactID}}">{{.ArtifactID}}</a></figcaption>
<iframe class="flame" sandbox="allow-scripts" title="flame graph of run {{.RunID}}" src="{{.Src}}"></iframe>
</figure>
{{end}}{{end}}
{{with .R.Limitations}}<h3>Limitations</h3><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</section>

<section id="ids">
<h2>Ids</h2>
<table class="ids">
<tr><th>kind</th><th>id</th><th>what</th></tr>
{{range .IDs}}<tr id="{{.ID}}"><td>{{.Kind}}</td><td class="id">{{.ID}}</td><td>{{.What}}</td></tr>
{{end}}</table>
</section>
</body>
</html>
`
