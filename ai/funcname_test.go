package ai

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidFunctionName: the loop takes exactly what production's pattern
// takes.
func TestValidFunctionName(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)
	for _, name := range []string{"", "a", "_", "9a", "-a", "a9", "a.b:c-d_e", "a b", "a/b", "é", "a\x00",
		"a" + strings.Repeat("b", 63), "a" + strings.Repeat("b", 64), strings.Repeat("_", 64), strings.Repeat("_", 65)} {
		if got, want := validFunctionName(name), pattern.MatchString(name); got != want {
			t.Errorf("validFunctionName(%q) = %v, want %v", name, got, want)
		}
	}
}
