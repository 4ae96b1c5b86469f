package rtdb

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
)

var testNow = time.UnixMilli(1700000000000)

// evalData is the database before the write every expression test makes.
func evalData() any {
	return map[string]any{
		"t": map[string]any{
			"key1": map[string]any{
				"s": "Hello", "n": 5.0, "b": true,
				"obj": map[string]any{"x": json.Number("1")},
			},
		},
		"cfg": map[string]any{"flag": true},
	}
}

var evalAuth = &Auth{UID: "alice", Provider: "password", Token: map[string]any{
	"email": "a@x.com", "admin": true, "n": json.Number("3"),
	"firebase": map[string]any{"sign_in_provider": "password"},
}}

// evalExpr compiles expr as the .write rule of /t/$k, writes newData at
// /t/key1 and returns "true", "false" or "error: ...".
func evalExpr(t *testing.T, expr string, auth *Auth) string {
	t.Helper()
	src := `{"rules": {"t": {"$k": {".write": ` + mustJSON(t, expr) + `}}}}`
	rs, diags := Compile(source.NewFile("t.json", src))
	if rs == nil {
		t.Fatalf("%s: does not compile: %v", expr, diags)
	}
	d, err := rs.Evaluate(Request{
		Operation: Write, Path: "/t/key1", Auth: auth, Data: evalData(), Now: testNow,
		NewData: map[string]any{"s": "World", "n": 6, "arr": []any{"a", "b"}},
	})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	if len(d.Rules) != 1 {
		t.Fatalf("%s: %d rules evaluated, want 1", expr, len(d.Rules))
	}
	switch r := d.Rules[0]; r.Verdict {
	case sim.VerdictAllow:
		return "true"
	case sim.VerdictDeny:
		return "false"
	default:
		_, msg, _ := strings.Cut(r.Message, ": ")
		return "error: " + msg
	}
}

func TestEvalExpressions(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		// Arithmetic and JavaScript's +.
		{"1 + 2 === 3", "true"},
		{"1.5 + 1 === 2.5", "true"},
		{"'a' + 'b' === 'ab'", "true"},
		{"'n' + 1 === 'n1'", "true"},
		{"1 + 'n' === '1n'", "true"},
		{"'x' + data.child('missing').val() === 'xnull'", "true"},
		{"'x' + data.child('b').val() === 'xtrue'", "true"},
		{"'v' + 0.1 === 'v0.1'", "true"},
		{"'v' + 1e21 === 'v1e+21'", "true"},
		{"'v' + 1e-7 === 'v1e-7'", "true"},
		{"'v' + 2 / 0 === 'vInfinity'", "true"},
		{"5 - 2 === 3", "true"},
		{"2 * 3 === 6", "true"},
		{"7 / 2 === 3.5", "true"},
		{"7 % 3 === 1", "true"},
		{"-7 % 3 === -1", "true"},
		{"1 / 0 > 1000", "true"},
		{"1 + 2 * 3 === 7", "true"},
		{"(1 + 2) * 3 === 9", "true"},
		{"- -1 === 1", "true"},
		{"-data.child('n').val() === -5", "true"},
		{"data.child('b').val() + 1 === 2", "error: + only operates on numbers and strings, got boolean and number"},
		{"data.child('missing').val() + 1 === 1", "error: + only operates on numbers and strings, got null and number"},
		{"data.child('s').val() - 1 === 1", "error: - only operates on numbers, got string and number"},
		{"-data.child('s').val() === 1", "error: unary - only operates on numbers, got string"},
		// Comparisons.
		{"1 < 2", "true"},
		{"2 <= 2", "true"},
		{"3 > 2", "true"},
		{"2 >= 3", "false"},
		{"'a' < 'b'", "true"},
		{"'B' < 'a'", "true"},
		{"'abc' >= 'abd'", "false"},
		{"data.child('n').val() < 'x'", "error: < cannot compare a number with string"},
		{"data.child('b').val() < 1", "error: < only operates on numbers and strings, got boolean"},
		// Strict and loose equality.
		{"1 === 1", "true"},
		{"'1' === 1", "false"},
		{"null === null", "true"},
		{"data.child('missing').val() === null", "true"},
		{"1 !== 2", "true"},
		{"'1' == 1", "true"},
		{"0 == ''", "true"},
		{"true == 1", "true"},
		{"'1' == true", "true"},
		{"null == 0", "false"},
		{"null == null", "true"},
		{"'abc' != 'abc'", "false"},
		{"data.val() == '[object Object]'", "true"},
		{"data.val() === null", "false"},
		{"'0x10' == 16", "true"},
		{"' 12 ' == 12", "true"},
		{"'1e3' == 1000", "true"},
		{"'abc' == 0", "false"},
		// Logic, short-circuit and precedence.
		{"true && false", "false"},
		{"false || true", "true"},
		{"!false", "true"},
		{"true || false && false", "true"},
		{"false && data.child('b').val() + 1 === 2", "false"},
		{"true || data.child('b').val() + 1 === 2", "true"},
		{"data.child('n').val() && true", "error: && only operates on booleans, got number"},
		{"!data.child('s').val()", "error: ! only operates on booleans, got string"},
		{"data.child('s').val()", "error: .write evaluated to 'Hello', not a boolean"},
		{"data.child('b').val()", "true"},
		{"true ? false : true", "false"},
		{"(data.child('n').val() > 3 ? 'big' : 'small') === 'big'", "true"},
		{"(data.child('n').val() > 9 ? data : newData).child('s').val() === 'World'", "true"},
		{"data.child('n').val() ? true : false", "error: the condition of ?: must be a boolean, got number"},
		// Snapshots.
		{"data.exists()", "true"},
		{"data.child('missing').exists()", "false"},
		{"data.child('obj/x').val() === 1", "true"},
		{"data.child('obj').child('x').val() === 1", "true"},
		{"data.child('/obj//x/').val() === 1", "true"},
		{"data.hasChild('s')", "true"},
		{"data.hasChild('nope')", "false"},
		{"data.hasChildren()", "true"},
		{"data.child('s').hasChildren()", "false"},
		{"data.hasChildren(['s', 'n'])", "true"},
		{"data.hasChildren(['s', 'zz'])", "false"},
		{"data.hasChildren([])", "true"},
		{"data.child('s').isString()", "true"},
		{"data.child('n').isNumber()", "true"},
		{"data.child('obj/x').isNumber()", "true"},
		{"data.child('b').isBoolean()", "true"},
		{"data.child('s').isNumber()", "false"},
		{"data.child('obj').isString()", "false"},
		{"data.child('missing').isString()", "false"},
		{"data.child('s').getPriority() === null", "true"},
		{"data.parent().child('key1').exists()", "true"},
		{"data.parent().parent().child('cfg/flag').val() === true", "true"},
		{"root.child('cfg').parent().child('t').exists()", "true"},
		{"root.parent().exists()", "error: cannot call exists() on null"},
		{"root.child('cfg/flag').val() === true", "true"},
		{"root.child('t/key1/s').val() === 'Hello'", "true"},
		{"data.child('a.b').exists()", "error: child('a.b'): invalid path: key 'a.b' contains a character RTDB keys cannot contain"},
		{"data.child(1).exists()", "false"},
		// newData is the post-write value at the rule's location.
		{"newData.child('s').val() === 'World'", "true"},
		{"newData.child('n').val() === data.child('n').val() + 1", "true"},
		{"newData.hasChildren(['arr'])", "true"},
		{"newData.child('arr/1').val() === 'b'", "true"},
		{"newData.child('b').exists()", "false"},
		{"newData.val() === null", "false"},
		{"newData.parent().child('key1/s').val() === 'World'", "true"},
		{"newData.parent().parent().child('cfg/flag').val() === true", "true"},
		// Strings.
		{"data.child('s').val().contains('ell')", "true"},
		{"data.child('s').val().beginsWith('He')", "true"},
		{"data.child('s').val().endsWith('lo')", "true"},
		{"'hello'.contains('z')", "false"},
		{"data.child('s').val().matches(/^h/i)", "true"},
		{"data.child('s').val().matches(/^h/)", "false"},
		{"'a/b'.matches(/^a\\/b$/)", "true"},
		{"'a-b-c'.replace('-', '') === 'abc'", "true"},
		{"'AbC'.toLowerCase() === 'abc'", "true"},
		{"'AbC'.toUpperCase() === 'ABC'", "true"},
		{"data.child('s').val().length === 5", "true"},
		{"'é😀'.length === 3", "true"},
		{"'x'.contains(1)", "error: contains() takes a string argument, got number"},
		{"data.child('n').val().contains('5')", "error: No such method/property 'contains' on a number"},
		{"data.child('missing').val().length === 0", "error: cannot read property 'length' of null"},
		{"data.child('n').val().length === 0", "error: No such method/property 'length' on a number"},
		// auth, $variables, now.
		{"auth.uid === 'alice'", "true"},
		{"auth.provider === 'password'", "true"},
		{"auth.token.email === 'a@x.com'", "true"},
		{"auth.token['firebase']['sign_in_provider'] === 'password'", "true"},
		{"auth.token.firebase.sign_in_provider === 'password'", "true"},
		{"auth.token.admin === true", "true"},
		{"auth.token.n === 3", "true"},
		{"auth.token.missing === null", "true"},
		{"auth.token.missing.deeper === null", "error: cannot read property 'deeper' of null"},
		{"auth.token.email.endsWith('@x.com')", "true"},
		{"auth.token.email.length === 7", "true"},
		{"auth != null", "true"},
		{"$k === 'key1'", "true"},
		{"$k.length === 4", "true"},
		{"$k + '!' === 'key1!'", "true"},
		{"now === 1700000000000", "true"},
		{"now - 1000 < now", "true"},
	}
	for _, tt := range tests {
		if got := evalExpr(t, tt.expr, evalAuth); got != tt.want {
			t.Errorf("%s\n  got  %s\n  want %s", tt.expr, got, tt.want)
		}
	}
}

func TestEvalSignedOut(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"auth === null", "true"},
		{"auth == null", "true"},
		{"auth != null && auth.uid === $k", "false"},
		{"auth.uid === $k", "error: cannot read property 'uid' of null"},
		{"auth.token['firebase'] === null", "error: cannot read property 'token' of null"},
	}
	for _, tt := range tests {
		if got := evalExpr(t, tt.expr, nil); got != tt.want {
			t.Errorf("%s\n  got  %s\n  want %s", tt.expr, got, tt.want)
		}
	}
}

func TestJSNumberString(t *testing.T) {
	t.Parallel()
	for f, want := range map[float64]string{
		0: "0", 1: "1", -1.5: "-1.5", 0.1: "0.1", 1e21: "1e+21", 1.5e-7: "1.5e-7", 123456789012: "123456789012",
		1e20: "100000000000000000000", 0.000001: "0.000001",
	} {
		if got := jsNumberString(f); got != want {
			t.Errorf("jsNumberString(%v) = %q, want %q", f, got, want)
		}
	}
}
