// Package bench compares the rules evaluator with cel-go on the same
// expression over the same request, side by side in one `go test -bench`
// run. It is its own module so cel-go stays a benchmark-only dependency of
// pyric: run `cd rules/bench && go test -bench . -benchmem`.
package bench
