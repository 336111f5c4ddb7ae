// Package massif reads Valgrind massif's documented massif.out text format
// (snapshots over time, heap, extra-heap and stacks, the detailed
// allocation trees) and captures native programs under
// `valgrind --tool=massif`.
package massif
