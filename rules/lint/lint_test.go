package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/source"
)

// sample builds an expression exercising one construct of
// rules-language.json, or "" for constructs that are not calls.
func sample(service string, c conformance.Construct) string {
	name := c.ID[strings.LastIndex(c.ID, ".")+1:]
	args := map[string]string{
		"matches": "'a.*'", "split": "'/'", "replace": "'a', 'b'", "hasAll": "[1]", "hasAny": "[1]",
		"hasOnly": "[1]", "join": "','", "concat": "[2]", "removeAll": "[1]", "difference": "[1].toSet()",
		"union": "[1].toSet()", "intersection": "[1].toSet()", "get": "'a', 0", "diff": "{'a': 2}",
		"bind": "{'a': 'b'}", "distance": "latlng.value(0, 0)",
	}
	receivers := map[string]string{
		"string": "'abc'", "list": "[1, 2]", "map": "{'a': 1}", "mapdiff": "{'a': 1}.diff({'a': 2})",
		"set": "[1].toSet()", "bytes": "b'ab'", "path": "path('a/b')", "timestamp": "request.time",
		"duration": "duration.value(1, 's')", "latlng": "latlng.value(1, 2)", "string|list|map": "'abc'",
	}
	funcs := map[string]string{
		"get": "get(/databases/$(database)/documents/a/b)", "exists": "exists(/databases/$(database)/documents/a/b)",
		"getAfter": "getAfter(/databases/$(database)/documents/a/b)", "existsAfter": "existsAfter(/databases/$(database)/documents/a/b)",
		"debug": "debug(1)", "string": "string(1)", "int": "int('1')", "float": "float(1)", "bool": "bool(1)", "path": "path('a/b')",
	}
	nsArgs := map[string]string{
		"math.pow": "2, 3", "timestamp.date": "2020, 1, 1", "duration.value": "1, 's'", "duration.time": "1, 2, 3, 4",
		"duration.abs": "duration.value(1, 's')", "latlng.value": "1, 2", "firestore.get": "/databases/(default)/documents/a/b",
		"firestore.exists": "/databases/(default)/documents/a/b",
	}
	switch c.Kind {
	case "method":
		return fmt.Sprintf("%s.%s(%s)", receivers[c.ReceiverType], name, args[name])
	case "function":
		rest := strings.TrimPrefix(c.ID, service+".function.")
		if f, ok := funcs[strings.TrimPrefix(rest, "cast.")]; ok {
			return f
		}
		a, ok := nsArgs[rest]
		if !ok {
			a = "1"
		}
		return fmt.Sprintf("%s(%s)", rest, a)
	}
	return ""
}

// TestLanguageConstructs lints a call to every function and method of
// rules-language.json: production's accepted ones get no mistake
// diagnostic, and the ones production rejects at evaluation (debug(),
// bool(), math.isInfinite(), hasAll on a map) get an error.
func TestLanguageConstructs(t *testing.T) {
	t.Parallel()
	lang, err := conformance.Language()
	if err != nil {
		t.Fatal(err)
	}
	mistakes := map[string]bool{CodeHallucinatedMethod: true, CodeHallucinatedGlobal: true, CodeUndefinedFunction: true,
		CodeUndefinedVariable: true, CodeWrongContextPath: true, "ARGUMENT_COUNT": true}
	for _, svc := range []struct{ key, service string }{{"firestore", Firestore}, {"storage", Storage}} {
		n := 0
		for _, c := range lang[svc.key] {
			expr := sample(svc.key, c)
			if expr == "" || c.Status == "unprobeable" {
				continue
			}
			n++
			text := firestoreRules("", "      allow read: if "+expr+" != null;")
			if svc.service == Storage {
				text = storageRules("", "      allow read: if "+expr+" != null;")
			}
			res := Lint(source.NewFile("t.rules", text), Options{Service: svc.service})
			var found []string
			for _, d := range res.Diagnostics {
				if mistakes[d.Code] || d.Code == "PARSE_ERROR" {
					found = append(found, d.Code+": "+d.Message)
				}
			}
			switch {
			case c.Status == "accepted" && len(found) > 0:
				t.Errorf("%s (accepted by production) `%s`: %v", c.ID, expr, found)
			case c.Status == "rejected" && len(found) == 0:
				t.Errorf("%s (rejected by production) `%s`: no diagnostic", c.ID, expr)
			}
		}
		if n < 10 {
			t.Errorf("%s: only %d constructs sampled", svc.key, n)
		}
	}
}

func TestFixes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		service, cond, code, fix string
	}{
		{Firestore, "request.uid == id", CodeWrongContextPath, "did you mean `request.auth.uid`?"},
		{Firestore, "resource.id == 'x'", CodeWrongContextPath, "did you mean `id`?"},
		{Firestore, "resource.owner == request.auth.uid", CodeWrongContextPath, "did you mean `resource.data.owner`?"},
		{Storage, "resource.path == 'x'", CodeWrongContextPath, "did you mean `resource.name`?"},
		{Firestore, "resource.data.roles.includes('admin')", CodeHallucinatedMethod, "write `'admin' in resource.data.roles` for a list, or `resource.data.roles.matches('.*admin.*')` for a substring"},
		{Firestore, "resource.data.s.startsWith('a.b')", CodeHallucinatedMethod, "write `resource.data.s.matches('a\\\\.b.*')`"},
		{Firestore, "resource.data.s.substring(1, 3) == 'x'", CodeHallucinatedMethod, "write `resource.data.s[1:3]`"},
		{Firestore, "resource.data.hasAll(['a'])", CodeHallucinatedMethod, "write `resource.data.keys().hasAll(['a'])`"},
		{Firestore, "Math.abs(1) == 1", CodeHallucinatedGlobal, "write `math.abs(…)` (lowercase)"},
		{Firestore, "request.auth.uid.length > 1", CodeLengthProperty, "write `request.auth.uid.size()`"},
		{Firestore, "resource.data.tags.size > 1", CodeMissingParens, "write `resource.data.tags.size()`"},
		{Firestore, "getx(/databases/$(database)/documents/a/b) != null", CodeUndefinedFunction, "did you mean `get()`?"},
		{Firestore, "resource.data.s.lowercase() == 'a'", CodeUndefinedFunction, "did you mean `lower()`?"},
		{Firestore, "ids == 1", CodeUndefinedVariable, "did you mean `id`?"},
		{Storage, "get(/databases/(default)/documents/a/b) != null", CodeUndefinedFunction, "write `firestore.get(/databases/(default)/documents/…)`"},
		{Firestore, "resource.data.a == `x${id}y`", CodeInvalidOperator, "write `'x' + id + 'y'`"},
	} {
		wrap := firestoreRules
		if tc.service == Storage {
			wrap = storageRules
		}
		res := Lint(source.NewFile("t.rules", wrap("", "      allow read: if "+tc.cond+";")), Options{Service: tc.service})
		found := false
		for _, d := range res.Diagnostics {
			if d.Code == tc.code {
				found = true
				if d.Fix != tc.fix {
					t.Errorf("%s: fix %q, want %q", tc.cond, d.Fix, tc.fix)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s in %v", tc.cond, tc.code, res.Diagnostics)
		}
	}
}

// TestSpans pins exact spans: the caret must sit under the offending text.
func TestSpans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cond, code, text string }{
		{"request.uid == id", CodeWrongContextPath, "request.uid"},
		{"resource.data.t.includes('x')", CodeHallucinatedMethod, "includes('x')"},
		{"request.auth.uid === id", CodeInvalidOperator, "==="},
		{"exists(/databases/{database}/documents/a/b)", CodeInvalidPathInterpolation, "{database}"},
		{"Date.now() > 1", CodeHallucinatedGlobal, "Date"},
		{"resource.data.a.length > 1", CodeLengthProperty, "length"},
		{"isOwnr(id)", CodeUndefinedFunction, "isOwnr"},
	} {
		text := firestoreRules("", "      allow read: if "+tc.cond+";")
		f := source.NewFile("t.rules", text)
		res := Lint(f, Options{})
		found := false
		for _, d := range res.Diagnostics {
			if d.Code != tc.code {
				continue
			}
			found = true
			if got := text[d.Span.Start.Offset:d.Span.End.Offset]; got != tc.text {
				t.Errorf("%s: span covers %q, want %q", tc.code, got, tc.text)
			}
			if d.Span.Start.Line != 6 || d.Span.End.Line != 6 || d.Span.End.Column-d.Span.Start.Column != len(tc.text) {
				t.Errorf("%s: span %v–%v", tc.code, d.Span.Start, d.Span.End)
			}
		}
		if !found {
			t.Errorf("%s: not reported for %s", tc.code, tc.cond)
		}
	}
}

func TestInvalidOperatorScan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"a === b !== c", []string{"===", "!=="}},
		{"a ==> b", nil}, // == then >
		{"a >= b <= c && d || e", nil},
		{"'===' + \"?.\" // ?? =>\n/* `x` */ x", nil},
		{"a?.b ?? c", []string{"?.", "??"}},
		{"f(x => x)", []string{"=>"}},
		{"`a${b}`", []string{"`a${b}`"}},
		{"'it\\'s === fine'", nil},
	} {
		f := source.NewFile("t", tc.src)
		var got []string
		for _, o := range scanOperators(f) {
			got = append(got, tc.src[o.start:o.end])
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: got %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestWeakenedEdgeCases(t *testing.T) {
	t.Parallel()
	text := firestoreRules("", "      allow read: if request.auth != null && (resource.data.a == 1 || resource.data.b == 2);")
	same := Lint(source.NewFile("t.rules", text), Options{Previous: source.NewFile("old.rules", text)})
	if sev, msgs := severityOf(same, CodeRulesWeakened); sev != "" {
		t.Errorf("identical rules: %v", msgs)
	}
	// Reordering conjuncts and renaming wildcards weakens nothing.
	reordered := strings.ReplaceAll(strings.ReplaceAll(text, "request.auth != null && (resource.data.a == 1 || resource.data.b == 2)",
		"(resource.data.a == 1 || resource.data.b == 2) && request.auth != null"), "{id}", "{docId}")
	if sev, msgs := severityOf(Lint(source.NewFile("t.rules", reordered), Options{Previous: source.NewFile("old.rules", text)}), CodeRulesWeakened); sev != "" {
		t.Errorf("reordered rules: %v", msgs)
	}
	// Dropping one side of an || changes the conjunct: reported.
	weaker := strings.ReplaceAll(text, " || resource.data.b == 2", "")
	if sev, _ := severityOf(Lint(source.NewFile("t.rules", weaker), Options{Previous: source.NewFile("old.rules", text)}), CodeRulesWeakened); sev != "warning" {
		t.Errorf("weakened ||: %q", sev)
	}
	// An unparseable previous file is reported, not compared.
	res := Lint(source.NewFile("t.rules", text), Options{Previous: source.NewFile("old.rules", "service {")})
	if sev, _ := severityOf(res, CodeRulesWeakened); sev != "info" {
		t.Errorf("unparseable previous: %q", sev)
	}
}

// TestRequestTimeMatching: cases reach rules through match paths and
// methods, like the simulator.
func TestRequestTimeMatching(t *testing.T) {
	t.Parallel()
	text := firestoreRules("", `      allow get: if request.time > timestamp.date(2020, 1, 1);
      allow create: if request.auth != null && request.resource.data.a == 1;`)
	for _, tc := range []struct {
		c    Case
		want int
	}{
		{Case{Method: "get", Path: "t/a"}, 1},
		{Case{Method: "GET", Path: "/t/a/"}, 1},
		{Case{Method: "get", Path: "t/a", RequestTime: "2026-01-01T00:00:00Z"}, 0},
		{Case{Method: "create", Path: "t/a"}, 0},
		{Case{Method: "get", Path: "u/a"}, 0},
		{Case{Method: "get", Path: "t/a/b/c"}, 0},
	} {
		res := Lint(source.NewFile("t.rules", text), Options{Cases: []Case{tc.c}})
		_, msgs := severityOf(res, CodeRequestTime)
		if len(msgs) != tc.want {
			t.Errorf("%+v: %d diagnostics, want %d: %v", tc.c, len(msgs), tc.want, msgs)
		}
	}
}

// TestGlobalAndServiceFunctions: functions above the service block and at
// service scope count like any other (the original linter skipped them).
func TestGlobalAndServiceFunctions(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("rules_version = '2';\n")
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, "function g%d() { return exists(/databases/(default)/documents/g/d%d); }\n", i, i)
	}
	b.WriteString("service cloud.firestore {\n  function s() { return g0() && g1() && g2() && g3() && g4() && g5(); }\n")
	b.WriteString("  match /databases/{database}/documents {\n    match /t/{id} {\n      allow read: if s();\n    }\n  }\n}\n")
	res := Lint(source.NewFile("t.rules", b.String()), Options{})
	if sev, _ := severityOf(res, CodeGetCount); sev != "warning" {
		t.Errorf("GET_COUNT through global functions: %q; %v", sev, res.Diagnostics)
	}
	if res.Metrics.FunctionCount != 7 || res.Metrics.MaxCallDepth != 2 {
		t.Errorf("metrics = %+v", res.Metrics)
	}
}
