// Package experiment plans the trials of a declared experiment
// (`[experiments.NAME]` in flameox.toml): which factor combination runs in
// which block and in which order, from the recorded seed. Planning is pure:
// the same experiment, adapter and seed give the same plan on every
// machine, and nothing is created. Running the plan belongs to pkg/capture,
// the only place a process starts.
//
// The order within a block is a Fisher–Yates shuffle driven by PCG-DXSM
// (math/rand/v2's PCG, a fully specified generator) seeded with
// (random_seed, block). The bounded draw is written here by rejection
// sampling rather than taken from rand.Rand's IntN or Shuffle, whose
// algorithms the Go project may change between releases; PCG's output
// for a seed is fixed by its specification, so an order recorded today
// can be re-derived from the seed by any later build.
package experiment
