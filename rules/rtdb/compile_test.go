package rtdb

import (
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/source"
)

// TestCompileErrors checks code, message and position of compile errors.
// at is the text the diagnostic must start at (its first occurrence, or the
// occurrence after the marker « when present, which is removed).
func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src, at, code, msg string
	}{
		{`{"rules": {".read": "auth !="}}`, `"}}`, "PARSE_ERROR", "unexpected end of expression"},
		{`{"rules": {".read": "a = b"}}`, `= b`, "PARSE_ERROR", "assignment"},
		{`{"rules": {".read": "newData.exists()"}}`, `newData`, "NEWDATA_IN_READ", "newData is not defined in .read"},
		{`{"rules": {".write": "newData.val()['kind'] === 'x'"}}`, `['kind']`, "UNKNOWN_METHOD", "No such method/property"},
		{`{"rules": {".write": "data['x'].exists()"}}`, `['x']`, "UNKNOWN_METHOD", "No such method/property"},
		{`{"rules": {".write": "data.chld('x').exists()"}}`, `chld`, "UNKNOWN_METHOD", "No such method/property 'chld' on a snapshot"},
		{`{"rules": {".write": "newData.val().startsWith('x')"}}`, `startsWith`, "UNKNOWN_METHOD", "No such method/property 'startsWith' on a value"},
		{`{"rules": {".write": "newData.val().size() > 1"}}`, `size`, "UNKNOWN_METHOD", "'size'"},
		{`{"rules": {".write": "auth.token.keys()"}}`, `keys`, "UNKNOWN_METHOD", "'keys' on a value"},
		{`{"rules": {".write": "auth.uid()"}}`, `uid`, "UNKNOWN_METHOD", "'uid' on an object"},
		{`{"rules": {".write": "now.toString() === '1'"}}`, `toString`, "UNKNOWN_METHOD", "on a number"},
		{`{"rules": {".write": "request.auth != null"}}`, `request`, "UNKNOWN_IDENTIFIER", "unknown identifier 'request'"},
		{`{"rules": {".write": "nwData.exists()"}}`, `nwData`, "UNKNOWN_IDENTIFIER", "unknown identifier 'nwData'"},
		{`{"rules": {"a": {".write": "$uid === auth.uid"}}}`, `$uid`, "UNKNOWN_IDENTIFIER", "unknown variable $uid"},
		{`{"rules": {".write": "exists()"}}`, `exists`, "UNKNOWN_IDENTIFIER", "unknown function 'exists'"},
		{`{"rules": {".write": "data.exists"}}`, `exists`, "TYPE_ERROR", "must be called"},
		{`{"rules": {".write": "newData.val().length() > 1"}}`, `length`, "TYPE_ERROR", "length is a property"},
		{`{"rules": {".write": "data.child() .exists()"}}`, `() .`, "TYPE_ERROR", "child() takes 1 argument, got 0"},
		{`{"rules": {".write": "newData.val().matches('x')"}}`, `'x'`, "TYPE_ERROR", "regular expression literal"},
		{`{"rules": {".write": "newData.hasChildren('a')"}}`, `'a'`, "TYPE_ERROR", "array literal"},
		{`{"rules": {".write": "newData.val().matches(/(?=x)/)"}}`, `/(?=x)/`, "INVALID_REGEX", "invalid regular expression"},
		{`{"rules": {".write": "newData.val().matches(/x/g)"}}`, `/x/g`, "INVALID_REGEX", "unsupported flag"},
		{`{"rules": {".write": "data == null"}}`, `data`, "TYPE_ERROR", "cannot compare a snapshot"},
		{`{"rules": {".write": "query.limitToFirst <= 10"}}`, `query`, "QUERY_OUTSIDE_READ", "query is only defined in .read rules"},
		{`{"rules": {".read": "query.limitFirst <= 10"}}`, `limitFirst`, "UNKNOWN_IDENTIFIER", "query has no member limitFirst"},
		{`{"rules": {".write": "auth"}}`, `auth`, "TYPE_ERROR", "must evaluate to a boolean"},
		{`{"rules": {".write": "'yes'"}}`, `'yes'`, "TYPE_ERROR", "must evaluate to a boolean"},
		{`{"rules": {".write": "1 && true"}}`, `1 &&`, "TYPE_ERROR", "&& only operates on booleans"},
		{`{"rules": {".write": "true + 1 === 2"}}`, `true +`, "TYPE_ERROR", "+ only operates on numbers and strings"},
		{`{"rules": {".write": "!data"}}`, `!data`, "TYPE_ERROR", "! only operates on booleans"},
		{`{"rules": {".write": "/x/ === 1"}}`, `/x/`, "TYPE_ERROR", "regular expression literal can only be"},
		{`{"rules": {".write": "data.val() > null"}}`, `null"`, "TYPE_ERROR", "> only operates on numbers and strings"},
		// The JSON tree.
		{`{"rules": {".read": true,}}`, `,}}`, "INVALID_RULES_JSON", "trailing comma"},
		{`["rules"]`, `["rules"]`, "INVALID_RULES_JSON", "must be a JSON object"},
		{`{"rulez": {}}`, `"rulez"`, "INVALID_RULES_JSON", `unknown top-level key "rulez"`},
		{`{}`, `{}`, "INVALID_RULES_JSON", `no "rules" key`},
		{`{"rules": true}`, `true`, "INVALID_RULES_JSON", `"rules" must be an object`},
		{`{"rules": {".reed": true}}`, `".reed"`, "INVALID_RULES_JSON", `unknown rule key ".reed"`},
		{`{"rules": {".read": 1}}`, `1}`, "INVALID_RULES_JSON", ".read must be a string expression or a boolean"},
		{`{"rules": {".indexOn": 1}}`, `1}`, "INVALID_RULES_JSON", ".indexOn must be a string or a list"},
		{`{"rules": {".indexOn": ["a", 2]}}`, `2]`, "INVALID_RULES_JSON", "must be a string"},
		{`{"rules": {"a": true}}`, `true`, "INVALID_RULES_JSON", `the rules for child "a" must be an object`},
		{`{"rules": {"$a": {}, "$b": {}}}`, `"$b"`, "INVALID_RULES_JSON", "only one $wildcard child"},
		{`{"rules": {"$a": {"$a": {}}}}`, `«"$a"`, "INVALID_RULES_JSON", "already declared by an enclosing location"},
		{`{"rules": {"$1x": {}}}`, `"$1x"`, "INVALID_RULES_JSON", "invalid wildcard"},
		{`{"rules": {"a#b": {}}}`, `"a#b"`, "INVALID_RULES_JSON", "invalid child key"},
		{`{"rules": {"a": {}, "a": {}}}`, `«"a"`, "INVALID_RULES_JSON", `duplicate key "a"`},
		{"{\"rules\": {\".read\": \"auth != null\"} /* unterminated", `/*`, "INVALID_RULES_JSON", "unterminated /* comment"},
	}
	for _, tt := range tests {
		src := tt.src
		_, diags := Compile(source.NewFile("r.json", src))
		if len(diags) == 0 {
			t.Errorf("%s: compiled, want %s", src, tt.code)
			continue
		}
		d := diags[0]
		for _, x := range diags {
			if x.Code == tt.code && strings.Contains(x.Message, tt.msg) {
				d = x
				break
			}
		}
		at := tt.at
		idx := strings.Index(src, at)
		if strings.HasPrefix(at, "«") {
			at = strings.TrimPrefix(at, "«")
			first := strings.Index(src, at)
			idx = first + 1 + strings.Index(src[first+1:], at)
		}
		if d.Code != tt.code || !strings.Contains(d.Message, tt.msg) || d.Span.Start.Offset != idx {
			t.Errorf("%s:\n  got  %s at %d: %s\n  want %s at %d: …%s…", src, d.Code, d.Span.Start.Offset, d.Message, tt.code, idx, tt.msg)
		}
		if d.Span.Start.Line != 1 || d.Span.End.Offset < d.Span.Start.Offset {
			t.Errorf("%s: bad span %+v", src, d.Span)
		}
	}
}

// TestCompilePositionsWithEscapes checks that a diagnostic inside a string
// containing JSON escapes points at the right column of the file.
func TestCompilePositionsWithEscapes(t *testing.T) {
	t.Parallel()
	src := "{\n  \"rules\": {\n    \".write\": \"newData.val() === \\\"a\\\" && nope\"\n  }\n}"
	_, diags := Compile(source.NewFile("r.json", src))
	if len(diags) != 1 {
		t.Fatalf("diags = %v", diags)
	}
	d := diags[0]
	if d.Code != "UNKNOWN_IDENTIFIER" || d.Span.Start.Line != 3 || d.Span.Start.Column != 43 || d.Span.End.Column != 47 {
		t.Errorf("diagnostic at %v-%v: %s", d.Span.Start, d.Span.End, d)
	}
	if got := source.Render(source.NewFile("r.json", src), d); !strings.Contains(got, "    "+strings.Repeat(" ", 42)+"^^^^\n") {
		t.Errorf("render:\n%s", got)
	}
}

// TestRulesLanguageConstructs compiles every construct the rules-language
// inventory lists as accepted by production.
func TestRulesLanguageConstructs(t *testing.T) {
	t.Parallel()
	accepted := []string{
		"auth != null", "auth.uid === $id", "auth.token.email_verified === true",
		"auth.token['firebase']['sign_in_provider'] === 'anonymous'",
		"data.val() === null", "newData.val() !== null", "root.child('x').exists()", "now > 0",
		"newData.child('a').val() === newData.child('a').parent().child('a').val()",
		"newData.hasChild('a') && newData.hasChildren() && newData.hasChildren(['a'])",
		"newData.getPriority() === null", "newData.isNumber() || newData.isString() || newData.isBoolean()",
		"newData.val().contains('a') || newData.val().beginsWith('a') || newData.val().endsWith('a')",
		"newData.val().matches(/^a+$/) || newData.val().replace('a', 'b') === 'b'",
		"newData.val().toLowerCase() === newData.val().toUpperCase() || newData.val().length > 0",
		"1 + 1 - 1 * 1 / 1 % 1 === 1 && 1 < 2 && 1 <= 2 && 2 > 1 && 2 >= 1 && 1 == 1 && 1 != 2",
		"!(true || false) ? -1 === -1 : true",
	}
	for _, e := range accepted {
		src := `{"rules": {"$id": {".write": ` + mustJSON(t, e) + `, ".indexOn": ["a"]}}}`
		if _, diags := Compile(source.NewFile("r.json", src)); diags.HasErrors() {
			t.Errorf("%s: %v", e, diags)
		}
	}
}
