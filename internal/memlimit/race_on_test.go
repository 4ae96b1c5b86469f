//go:build race

package memlimit

// raceOn: the race detector maps shadow memory for the heap's pages,
// faulting pages of its own.
const raceOn = true
