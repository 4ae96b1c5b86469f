package databaseserver

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidCallback: the loop takes exactly the callback names the
// pattern ^[0-9A-Za-z_]{1,40}$ takes.
func TestValidCallback(t *testing.T) {
	pattern := regexp.MustCompile(`^[0-9A-Za-z_]{1,40}$`)
	for _, cb := range []string{"", "a", "0", "_", "pLPCommand1", "a-b", "a.b", "é", "a\n",
		strings.Repeat("x", 40), strings.Repeat("x", 41)} {
		if got, want := validCallback(cb), pattern.MatchString(cb); got != want {
			t.Errorf("validCallback(%q) = %v, want %v", cb, got, want)
		}
	}
}
