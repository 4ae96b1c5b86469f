//go:build !race

package memlimit

const raceOn = false
