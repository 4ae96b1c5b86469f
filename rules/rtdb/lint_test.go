package rtdb

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pyric/pyric/rules/source"
)

var wantRe = regexp.MustCompile(`// want ([A-Z_ ]+)`)

// TestLintCorpus lints every file of testdata/lint. A `// want CODE...`
// comment says which diagnostics must start on its line; every other line
// must have none, so each file holds positive and negative cases.
func TestLintCorpus(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "lint", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no lint corpus: %v", err)
	}
	covered := map[string]bool{}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := source.NewFile(path, string(b))
		res := Lint(f)
		got := map[int][]string{}
		for _, d := range res.Diagnostics {
			got[d.Span.Start.Line] = append(got[d.Span.Start.Line], d.Code)
			covered[d.Code] = true
			if d.Message == "" || !d.Span.Start.IsValid() || d.Span.End.Offset < d.Span.Start.Offset {
				t.Errorf("%s: malformed diagnostic %+v", path, d)
			}
			if d.Severity == source.Warning && d.Fix == "" {
				t.Errorf("%s: warning without a fix: %s", path, d)
			}
		}
		want := map[int][]string{}
		for i, line := range strings.Split(string(b), "\n") {
			if m := wantRe.FindStringSubmatch(line); m != nil {
				want[i+1] = strings.Fields(m[1])
			}
		}
		lines := map[int]bool{}
		for l := range got {
			lines[l] = true
		}
		for l := range want {
			lines[l] = true
		}
		for l := range lines {
			g, w := append([]string(nil), got[l]...), append([]string(nil), want[l]...)
			sort.Strings(g)
			sort.Strings(w)
			if strings.Join(g, " ") != strings.Join(w, " ") {
				t.Errorf("%s:%d: got %v, want %v\n    %s", path, l, g, w, f.Line(l))
			}
		}
		if wantUnparseable := strings.HasSuffix(path, "invalid_json.json"); res.Unparseable != wantUnparseable {
			t.Errorf("%s: Unparseable = %v", path, res.Unparseable)
		}
	}
	for _, code := range []string{"INVALID_RULES_JSON", "PARSE_ERROR", "UNKNOWN_METHOD", "UNKNOWN_IDENTIFIER",
		"NEWDATA_IN_READ", "HARDCODED_TRUE", "LOOSE_EQUALITY", "DATA_IN_WRITE", "MISSING_INDEX"} {
		if !covered[code] {
			t.Errorf("the corpus has no positive case for %s", code)
		}
		if Codes[code] == "" {
			t.Errorf("%s is missing from Codes", code)
		}
	}
}

func TestLintFixes(t *testing.T) {
	t.Parallel()
	res := Lint(source.NewFile("r.json", `{"rules": {"a": {".write": "newData.val() == 1"}, "$u": {".read": true}}}`))
	fixes := map[string]string{}
	for _, d := range res.Diagnostics {
		fixes[d.Code] = d.Fix
	}
	if fixes["LOOSE_EQUALITY"] != "use `===`" {
		t.Errorf("LOOSE_EQUALITY fix = %q", fixes["LOOSE_EQUALITY"])
	}
	if !strings.Contains(fixes["HARDCODED_TRUE"], "auth.uid === $u") {
		t.Errorf("HARDCODED_TRUE fix = %q", fixes["HARDCODED_TRUE"])
	}
	if res.Metrics.Rules != 2 || res.Metrics.Wildcards != 1 || res.Metrics.Locations != 3 {
		t.Errorf("metrics = %+v", res.Metrics)
	}
}
