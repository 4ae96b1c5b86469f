package eval

import (
	"strconv"
	"testing"
)

// TestRegexCacheIsBounded: patterns can come from data, so compiling ever
// new ones keeps the cache at regexCacheMax patterns at most, and a
// pattern compiled after the cache started over still answers as before,
// anchored or not, and a bad one still fails with its message.
func TestRegexCacheIsBounded(t *testing.T) {
	for i := range regexCacheMax + 100 {
		p := "a" + strconv.Itoa(i)
		re, err := compileAnchored(p)
		if err != nil || !re.MatchString(p) || re.MatchString(p+"x") {
			t.Fatalf("%s: anchored %v, %v", p, re, err)
		}
	}
	regexes.RLock()
	n := len(regexes.m)
	regexes.RUnlock()
	if n > regexCacheMax {
		t.Errorf("the cache holds %d patterns, more than %d", n, regexCacheMax)
	}
	re, err := compileRegex("b+")
	if err != nil || !re.MatchString("xbbx") {
		t.Errorf("unanchored b+: %v, %v", re, err)
	}
	if _, err := compileAnchored("("); err == nil || err.Error() != "Invalid regular expression pattern. Pattern: ^(?:()$." {
		t.Errorf("bad anchored pattern: %v", err)
	}
	if _, err := compileRegex("("); err == nil || err.Error() != "Invalid regular expression pattern. Pattern: (." {
		t.Errorf("bad pattern: %v", err)
	}
}
