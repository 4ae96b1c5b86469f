package ast_test

import (
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/parser"
	"github.com/pyric/pyric/rules/source"
)

func TestInspectVisitsEveryNodeInSourceOrder(t *testing.T) {
	t.Parallel()
	src := "rules_version = '2';\nservice s {\n  function f(x) { let y = x + 1; return y > 2; }\n  match /d/{id} {\n    allow read: if f(1) && request.auth.uid in ['a', 'b'] && /p/$(id) != null && 'ab'[0:1] == 'a';\n  }\n}\n"
	f := source.NewFile("t.rules", src)
	rs, diags := parser.Parse(f)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var idents []string
	roots := 0
	rs.Exprs(func(e ast.Expr) {
		roots++
		ast.Inspect(e, func(n ast.Expr) bool {
			if id, ok := n.(*ast.Ident); ok {
				idents = append(idents, id.Name)
			}
			return true
		})
	})
	if roots != 3 {
		t.Errorf("%d roots, want let, return and allow", roots)
	}
	if got := strings.Join(idents, " "); got != "x y f request id" {
		t.Errorf("identifiers %q", got)
	}
	// A false result prunes the subtree.
	n := 0
	rs.Exprs(func(e ast.Expr) {
		ast.Inspect(e, func(x ast.Expr) bool {
			if x != nil {
				n++
			}
			_, isCall := x.(*ast.Call)
			return !isCall
		})
	})
	if n == 0 {
		t.Fatal("nothing visited")
	}
	if ast.IsNil((*ast.Binary)(nil)) != true || ast.IsNil(&ast.Bad{}) {
		t.Error("IsNil")
	}
}
