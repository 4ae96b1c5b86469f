package expr_test

import (
	"fmt"

	"github.com/pyric/pyric/expr"
)

func ExampleResolve() {
	env := expr.Env{"$acct": map[string]any{"balance": 100}}
	out, err := expr.Resolve(map[string]any{"balance": map[string]any{"$expr": "$acct.balance - 30"}, "note": "debit"}, env)
	fmt.Println(out, err)
	_, err = expr.Eval("$acct.balanse", env)
	fmt.Println(err)
	// Output:
	// map[balance:70 note:debit] <nil>
	// $expr 1:6: $acct has no field balanse
}
