package lint

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/source"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata")

// wantRe matches `// want CODE CODE:warning …` annotations.
var wantRe = regexp.MustCompile(`// want((?:\s+[A-Z_]+(?::(?:error|warning|info))?)+)`)

// codesWithoutFix are codes whose diagnostics may have no fix: production's
// own compile errors, and names with no close match.
var codesWithoutFix = map[string]bool{
	"PARSE_ERROR": true, "ARGUMENT_COUNT": true, "UNDEFINED_FUNCTION": true, "UNDEFINED_VARIABLE": true,
	"WRONG_CONTEXT_PATH": true, "SERVICE": true, "RECURSIVE_WILDCARD_POSITION": true,
}

// corpusFile lints one testdata file with its companions: NAME.previous
// (the ruleset it replaces) and NAME.cases.json (simulator test cases).
func corpusFile(t *testing.T, path string) (*source.File, *Result) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Service: Firestore}
	if filepath.Base(filepath.Dir(path)) == "storage" {
		opts.Service = Storage
	}
	base := strings.TrimSuffix(path, ".rules")
	if prev, err := os.ReadFile(base + ".previous"); err == nil {
		opts.Previous = source.NewFile(filepath.Base(base)+".previous", string(prev))
	}
	if cases, err := os.ReadFile(base + ".cases.json"); err == nil {
		if err := json.Unmarshal(cases, &opts.Cases); err != nil {
			t.Fatalf("%s.cases.json: %v", base, err)
		}
	}
	f := source.NewFile(filepath.Base(path), string(b))
	return f, Lint(f, opts)
}

// TestCorpus lints every file of testdata/{firestore,storage}. A
// `// want CODE…` comment lists the diagnostics that start on its line
// (CODE:warning also pins the severity); every other line must have none,
// so each file holds positive and negative cases. The rendered output must
// match NAME.golden (refresh with -update).
func TestCorpus(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.rules"))
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	covered := map[string]map[string]bool{Firestore: {}, Storage: {}}
	for _, path := range files {
		t.Run(strings.TrimPrefix(path, "testdata/"), func(t *testing.T) {
			f, res := corpusFile(t, path)
			svc := Firestore
			if strings.Contains(path, "storage") {
				svc = Storage
			}
			got := map[int][]string{}
			for _, d := range res.Diagnostics {
				checkWellFormed(t, f, d)
				got[d.Span.Start.Line] = append(got[d.Span.Start.Line], d.Code+":"+d.Severity.String())
				covered[svc][d.Code] = true
			}
			want := map[int][]string{}
			wantParseFailure := false
			for i, line := range strings.Split(f.Text, "\n") {
				if m := wantRe.FindStringSubmatch(line); m != nil {
					want[i+1] = strings.Fields(m[1])
					for _, w := range want[i+1] {
						code, _, _ := strings.Cut(w, ":")
						switch code {
						case "PARSE_ERROR", "INVALID_OPERATOR", "INVALID_PATH_INTERPOLATION":
							wantParseFailure = true
						}
					}
				}
			}
			for _, l := range unionLines(got, want) {
				g, w := got[l], want[l]
				if !matchCodes(g, w) {
					t.Errorf("line %d: got %v, want %v\n    %s", l, g, w, f.Line(l))
				}
			}
			if res.ParseFailed != wantParseFailure {
				t.Errorf("ParseFailed = %v, want %v", res.ParseFailed, wantParseFailure)
			}
			golden(t, strings.TrimSuffix(path, ".rules")+".golden", render(f, res))
		})
	}
	t.Run("coverage", func(t *testing.T) {
		for _, code := range []string{
			"PARSE_ERROR", CodeInvalidOperator, CodeInvalidPathInterpolation, CodeChainDepth, CodeNesting,
			CodeLetLimit, CodeCallDepth, CodeGetCount, CodeExpressionBudget, CodeSharedGate, CodeGetDuplication,
			CodePermissiveRule, CodeRecursiveWildcardOpen, CodeRecursiveWildcardRead, CodeWriteWithoutAuth,
			CodeWriteUnvalidated, CodeHallucinatedMethod, CodeHallucinatedGlobal, CodeWrongContextPath,
			CodeLengthProperty, CodeMissingParens, CodeUndefinedFunction, CodeUndefinedVariable, CodeRequestTime,
			CodeRulesWeakened, "RECURSION", "DUPLICATE_NAME", "INVALID_REGEX", "ARGUMENT_COUNT", "UNKNOWN_METHOD",
			"UNUSED", "RULES_VERSION",
		} {
			if !covered[Firestore][code] {
				t.Errorf("the Firestore corpus has no positive case for %s", code)
			}
		}
		for _, code := range []string{
			CodeInvalidOperator, CodeGetCount, CodeExpressionBudget, CodeSharedGate, CodeGetDuplication,
			CodePermissiveRule, CodeRecursiveWildcardOpen, CodeRecursiveWildcardRead, CodeWriteWithoutAuth,
			CodeWriteUnvalidated, CodeHallucinatedMethod, CodeHallucinatedGlobal, CodeWrongContextPath,
			CodeLengthProperty, CodeMissingParens, CodeUndefinedFunction, CodeRequestTime, CodeRulesWeakened,
			CodeInvalidPathInterpolation,
		} {
			if !covered[Storage][code] {
				t.Errorf("the Storage corpus has no positive case for %s", code)
			}
		}
		for code := range covered[Firestore] {
			if Codes[code] == "" {
				t.Errorf("%s is missing from Codes", code)
			}
		}
	})
}

func checkWellFormed(t *testing.T, f *source.File, d source.Diagnostic) {
	t.Helper()
	sp := d.Span
	switch {
	case d.Code == "" || d.Message == "":
		t.Errorf("diagnostic without code or message: %+v", d)
	case !sp.Start.IsValid() || !sp.End.IsValid():
		t.Errorf("diagnostic without a position: %s", d)
	case sp.End.Offset < sp.Start.Offset || sp.End.Offset > len(f.Text):
		t.Errorf("diagnostic span out of range: %s %+v", d, sp)
	case d.Fix == "" && !codesWithoutFix[d.Code]:
		t.Errorf("%s without a fix: %s", d.Code, d)
	case Codes[d.Code] == "":
		t.Errorf("%s is missing from Codes", d.Code)
	}
}

func unionLines(a, b map[int][]string) []int {
	set := map[int]bool{}
	for l := range a {
		set[l] = true
	}
	for l := range b {
		set[l] = true
	}
	var out []int
	for l := range set {
		out = append(out, l)
	}
	sort.Ints(out)
	return out
}

// matchCodes compares CODE:severity diagnostics with annotations, which may
// leave the severity out.
func matchCodes(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	g := append([]string(nil), got...)
	sort.Strings(g)
	used := make([]bool, len(g))
	for _, w := range want {
		found := false
		for i, x := range g {
			if used[i] {
				continue
			}
			if x == w || strings.HasPrefix(x, w+":") {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func render(f *source.File, res *Result) string {
	var b strings.Builder
	source.WriteText(&b, f, res.Diagnostics)
	m, _ := json.Marshal(res.Metrics)
	b.WriteString("metrics: " + string(m) + "\n")
	return b.String()
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run go test -update and review the diff):\n%s", path, got)
	}
}
