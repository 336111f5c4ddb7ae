package mcpserver_test

import (
	"reflect"
	"testing"
)

// scalingTOML sweeps a benchmark whose time is n² (about 1% noise) over
// four sizes in three blocks. The noise is a fixed sequence over the
// trials (a counter in .trials; the trials run one at a time, in the
// order random_seed fixes), not random draws: the choice rule's
// lack-of-fit test rejects the true law in 5% of random draws by design
// (docs/scaling.md), so "chosen quadratic" would not hold in every run.
const scalingTOML = `schema_version = 1
[workloads.grow]
argv = ["/bin/sh", "-c", "c=$(cat .trials 2>/dev/null || echo 0); echo $((c + 1)) > .trials; r=$((c * 13 % 21)); v=$(($1 * $1 / 1024)); echo \"BenchmarkGrow 1000 $((v * (990 + r) / 10)) ns/op\"", "{impl}", "{n}"]
timeout_seconds = 60
[workloads.grow.parameters]
impl = ["quad"]
n = [1024, 2048, 4096, 8192]

[experiments.grow]
workload = "grow"
variants = ["quad"]
scaling_parameter = "n"
scaling_values = [1024, 2048, 4096, 8192]
blocks = 3
random_seed = 5
primary_metric = "gobench.sec/op"
polarity = "lower_is_better"
`

// TestAnalyzeScalingParity: analyze_scaling returns what flameox analyze
// scaling --json prints for the same experiment, by default and for one
// variant; the quadratic law is chosen; a missing experiment is a
// structured error.
func TestAnalyzeScalingParity(t *testing.T) {
	dir := captureProject(t, scalingTOML, "grow")
	run := porcelainJSON(t, dir, "experiment", "run", "grow", "--adapter", "process").(map[string]any)
	exp := run["experiment"].(map[string]any)["experiment_id"].(string)
	c := connect(t, dir, nil)
	for _, tc := range []struct {
		name string
		args map[string]any
		cli  []string
	}{
		{"default", map[string]any{}, nil},
		{"variant", map[string]any{"variant": "quad", "limit": 5}, []string{"--variant", "quad", "--limit", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"experiment_id": exp}
			for k, v := range tc.args {
				args[k] = v
			}
			got := mcpResult(t, c, "analyze_scaling", args)
			if want := porcelainJSON(t, dir, append([]string{"analyze", "scaling", exp}, tc.cli...)...); !reflect.DeepEqual(got, want) {
				t.Fatalf("analyze_scaling differs from flameox analyze scaling --json\nMCP: %v\nCLI: %v", got, want)
			}
			r := got.(map[string]any)
			series := r["series"].([]any)
			if r["attempted_trials"].(float64) != 12 || len(series) != 1 {
				t.Fatalf("scaling: %v", r)
			}
			choice := series[0].(map[string]any)["choice"].(map[string]any)
			if choice["decision"] != "chosen" || choice["model"] != "quadratic" {
				t.Fatalf("choice: %v", choice)
			}
		})
	}
	c.fails("analyze_scaling", map[string]any{"experiment_id": "exp-nosuch"}, "NOT_FOUND")
	c.fails("analyze_scaling", map[string]any{}, "INVALID_ARGUMENTS")
}
