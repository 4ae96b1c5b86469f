package eval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
)

// TestMatchWorkIsIndependentOfSiblings: matching a request against 20 or
// 2,000 sibling blocks tries the same number of pattern segments, since
// the children index leads straight to the candidates.
func TestMatchWorkIsIndependentOfSiblings(t *testing.T) {
	t.Parallel()
	tries := func(n int) int {
		var b strings.Builder
		b.WriteString("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "    match /c%d/{id} { allow get: if true; }\n", i)
		}
		b.WriteString("    match /{other}/{id} { allow get: if false; }\n  }\n}\n")
		rs, diags := parser.Parse(source.NewFile("t.rules", b.String()))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		m, _, k := NewProgram(rs).match([]string{"databases", "(default)", "documents", fmt.Sprintf("c%d", n-1), "x"}, nil)
		if len(m) != 2 {
			t.Fatalf("%d blocks: %d matched, want the named and the wildcard block", n, len(m))
		}
		return k
	}
	if small, large := tries(20), tries(2000); small != large {
		t.Errorf("matching tried %d segments among 20 siblings, %d among 2000", small, large)
	}
}
