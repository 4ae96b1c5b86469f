package lint

import (
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/check"
)

// suggest returns the candidate closest to name when it is close enough to
// be what was meant ("did you mean …?"), or "".
func suggest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if c == name {
			continue
		}
		d := distance(strings.ToLower(name), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(name) <= 3 {
		limit = 1
	}
	if bestD <= limit {
		return best
	}
	// lowercase → lower, toMillisecond → toMillis: a known name the
	// written one starts with.
	best = ""
	for _, c := range sorted {
		if len(c) >= 3 && len(c) > len(best) && strings.HasPrefix(strings.ToLower(name), strings.ToLower(c)) {
			best = c
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// firestoreMethods and storageMethods are the methods of every rules type
// in each service's environment, for suggestions when lint is given no
// table of its own (Options.Decls).
var (
	firestoreMethods = check.Environment(Firestore).Methods()
	storageMethods   = check.Environment(Storage).Methods()
)
