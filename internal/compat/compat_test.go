package compat

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the module's root, found from the package directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = up
	}
}

// testFunc is one Test function of the repository, as far as a static
// reading can tell.
type testFunc struct {
	dir, name string
	pos       string
	body      string // the function's source
	// skipped says why the test would skip under PYRIC_E2E_REQUIRED=1,
	// or is empty.
	skipped string
	rows    []string // row ids its comments name (// conformance: id, id)
}

// testPackage is what a package directory's tests hold.
type testPackage struct {
	funcs map[string]*testFunc
	text  string          // every _test.go file and every step script of the directory
	known map[string]bool // steps listed as known gaps (skipped when they fail)
}

// rowRef is a comment line "conformance: id[, id]" (at the start of a
// line of the comment).
var rowRef = regexp.MustCompile(`(?m)^\s*conformance:\s*([a-z0-9][a-z0-9.,\- ]*[a-z0-9])\s*$`)

// indexTests parses every _test.go file under root (not node_modules,
// testdata, or hidden directories) and returns its test packages by
// directory, and the row ids named by comments outside any test.
func indexTests(t *testing.T, root string) (map[string]*testPackage, map[string][]string) {
	t.Helper()
	pkgs := map[string]*testPackage{}
	loose := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (n == "node_modules" || n == "testdata" || n == "dist" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &testPackage{funcs: map[string]*testFunc{}, known: map[string]bool{}}
			pkgs[rel] = p
		}
		switch ext := filepath.Ext(path); {
		case strings.HasSuffix(path, "_test.go"):
		case ext == ".cjs" || ext == ".mjs" || ext == ".js":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			p.text += string(b)
			return nil
		default:
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		p.text += string(src)
		collectKnown(f, p.known)
		claimed := map[*ast.CommentGroup]bool{}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") || fd.Body == nil {
				continue
			}
			tf := &testFunc{dir: rel, name: fd.Name.Name, pos: fset.Position(fd.Pos()).String(),
				body: string(src[fset.Position(fd.Body.Pos()).Offset:fset.Position(fd.Body.End()).Offset])}
			tf.skipped = skipReason(fd.Body)
			for _, cg := range f.Comments {
				if cg == fd.Doc || cg.Pos() >= fd.Body.Pos() && cg.End() <= fd.Body.End() {
					claimed[cg] = true
					tf.rows = append(tf.rows, refs(cg.Text())...)
				}
			}
			p.funcs[tf.name] = tf
		}
		for _, cg := range f.Comments {
			if !claimed[cg] {
				if ids := refs(cg.Text()); len(ids) > 0 {
					loose[fset.Position(cg.Pos()).String()] = ids
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, loose
}

func refs(comment string) []string {
	var ids []string
	for _, m := range rowRef.FindAllStringSubmatch(comment, -1) {
		for _, id := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ' ' }) {
			ids = append(ids, id)
		}
	}
	return ids
}

// collectKnown adds the string keys of every composite literal given as
// the Known field (e2etest.Want) or held by a package-level variable
// whose name mentions "known": those steps skip when they fail.
func collectKnown(f *ast.File, known map[string]bool) {
	keys := func(e ast.Expr) {
		cl, ok := e.(*ast.CompositeLit)
		if !ok {
			return
		}
		for _, el := range cl.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if bl, ok := kv.Key.(*ast.BasicLit); ok && bl.Kind == token.STRING {
					if s, err := strconv.Unquote(bl.Value); err == nil {
						known[s] = true
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Known" {
				keys(n.Value)
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if strings.Contains(strings.ToLower(name.Name), "known") && i < len(n.Values) {
					keys(n.Values[i])
				}
			}
		}
		return true
	})
}

// skipReason is the static check that a test runs under
// PYRIC_E2E_REQUIRED=1: it must not call t.Skip/Skipf/SkipNow as a
// statement of its body (an unconditional skip), nor inside an if whose
// condition reads an environment variable other than PYRIC_E2E_REQUIRED
// (a test that runs only when asked, e.g. a benchmark harness), unless
// the condition is os.Getenv(X) != "" (the child process of a crash test
// skipping itself). Skips under testing.Short() and the e2etest helpers (which
// fail instead of skipping when PYRIC_E2E_REQUIRED=1) are accepted.
func skipReason(body *ast.BlockStmt) string {
	for _, st := range body.List {
		switch st := st.(type) {
		case *ast.ExprStmt:
			if isSkip(st.X) {
				return "calls t.Skip unconditionally"
			}
		case *ast.IfStmt:
			if readsEnv(st.Cond) && !setMarker(st.Cond) && containsSkip(st.Body) {
				return "skips unless an environment variable is set"
			}
		}
	}
	return ""
}

// setMarker reports whether cond is os.Getenv(X) != "": a skip when a
// variable is set (the child process of a crash test marks itself so),
// which a normal run never meets.
func setMarker(cond ast.Expr) bool {
	b, ok := cond.(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ {
		return false
	}
	lit, ok := b.Y.(*ast.BasicLit)
	return ok && lit.Value == `""` && readsEnv(b.X)
}

func isSkip(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && (sel.Sel.Name == "Skip" || sel.Sel.Name == "Skipf" || sel.Sel.Name == "SkipNow")
}

func containsSkip(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && isSkip(e) {
			found = true
		}
		return !found
	})
	return found
}

func readsEnv(cond ast.Expr) bool {
	found := false
	ast.Inspect(cond, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") {
			if len(call.Args) == 1 {
				if bl, ok := call.Args[0].(*ast.BasicLit); ok && strings.Contains(bl.Value, "PYRIC_E2E_REQUIRED") {
					return true
				}
			}
			found = true
		}
		return !found
	})
	return found
}

// TestRegistryParses checks the embedded files parse: headers, fields,
// statuses, notes, unique ids, and every service in its place.
func TestRegistryParses(t *testing.T) {
	all, err := Services()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(order) {
		t.Fatalf("%d services, want %d", len(all), len(order))
	}
	for _, s := range all {
		if len(s.Rows) == 0 {
			t.Errorf("%s has no row", s.ID)
		}
		if s.About == "" {
			t.Errorf("%s has no about header", s.ID)
		}
	}
}

// TestConformingRowsAreProved checks every test a row names: the test
// function exists in that package directory, would not skip under
// PYRIC_E2E_REQUIRED=1 (see skipReason), and a subtest's name appears in
// the function's package (its body, the package's other test files —
// the expected-results tables of the step tests — or the step scripts
// the package runs; each level of a nested subtest a/b on its own) and is
// not listed as a known gap.
func TestConformingRowsAreProved(t *testing.T) {
	pkgs, _ := indexTests(t, repoRoot(t))
	all, err := Services()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range unproved(all, pkgs) {
		t.Error(p)
	}
}

// unproved lists the problems of the tests the rows of services name.
func unproved(services []*Service, pkgs map[string]*testPackage) []string {
	var out []string
	for _, s := range services {
		for _, r := range s.Rows {
			for _, name := range r.Tests {
				dir, fn, sub, err := SplitTest(name)
				if err != nil {
					out = append(out, fmt.Sprintf("%s: %v", r.ID, err))
					continue
				}
				p := pkgs[dir]
				var tf *testFunc
				if p != nil {
					tf = p.funcs[fn]
				}
				if tf == nil {
					out = append(out, fmt.Sprintf("%s names %s: no func %s in %s/*_test.go", r.ID, name, fn, dir))
					continue
				}
				if r.Status == Conforming && tf.skipped != "" {
					out = append(out, fmt.Sprintf("%s names %s, which %s (%s)", r.ID, name, tf.skipped, tf.pos))
				}
				if sub == "" {
					continue
				}
				for _, part := range strings.Split(sub, "/") {
					if !strings.Contains(tf.body, part) && !strings.Contains(p.text, part) {
						out = append(out, fmt.Sprintf("%s names %s: the subtest %q appears nowhere in %s", r.ID, name, part, dir))
					}
					if r.Status == Conforming && p.known[part] {
						out = append(out, fmt.Sprintf("%s names %s, a known gap of %s (it skips when it fails)", r.ID, name, dir))
					}
				}
			}
		}
	}
	return out
}

// TestTestsNameRealRows checks the other direction: every row id a
// test's comment names (// conformance: id, id) exists, and the row it
// names lists that test (the function or one of its subtests), so the
// registry and the tests agree.
func TestTestsNameRealRows(t *testing.T) {
	pkgs, loose := indexTests(t, repoRoot(t))
	all, err := Services()
	if err != nil {
		t.Fatal(err)
	}
	problems, n := misnamed(all, pkgs, loose)
	for _, p := range problems {
		t.Error(p)
	}
	if n < 20 {
		t.Errorf("tests name rows %d times, want at least 20: the check would check little", n)
	}
}

// misnamed lists the row references of tests that name no row or a row
// that does not list them, and counts the references.
func misnamed(services []*Service, pkgs map[string]*testPackage, loose map[string][]string) ([]string, int) {
	rows := map[string]*Row{}
	for _, s := range services {
		for i := range s.Rows {
			rows[s.Rows[i].ID] = &s.Rows[i]
		}
	}
	var out []string
	n := 0
	for dir, p := range pkgs {
		for _, tf := range p.funcs {
			for _, id := range tf.rows {
				n++
				r := rows[id]
				if r == nil {
					out = append(out, fmt.Sprintf("%s (%s) names the row %s, which does not exist", tf.name, tf.pos, id))
					continue
				}
				listed := false
				for _, name := range r.Tests {
					d, fn, _, _ := SplitTest(name)
					listed = listed || d == dir && fn == tf.name
				}
				if !listed {
					out = append(out, fmt.Sprintf("%s (%s) names the row %s, whose tests do not list %s.%s", tf.name, tf.pos, id, dir, tf.name))
				}
			}
		}
	}
	for pos, ids := range loose {
		for _, id := range ids {
			n++
			if rows[id] == nil {
				out = append(out, fmt.Sprintf("%s: a comment names the row %s, which does not exist", pos, id))
			}
		}
	}
	sort.Strings(out)
	return out, n
}

// TestCheckersCatch runs the two checks over a made-up package: each
// kind of problem they exist for is reported, and nothing else.
func TestCheckersCatch(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pkg")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := `package pkg

import (
	"os"
	"testing"
)

var knownGaps = map[string]string{"gap step": "not yet"}

// conformance: svc.ok, svc.nope
func TestOK(t *testing.T) {}

// conformance: svc.unlisting
func TestUnlisted(t *testing.T) {}

func TestSkipped(t *testing.T) { t.Skip("later") }

func TestBench(t *testing.T) {
	if os.Getenv("PYRIC_BENCH") == "" {
		t.Skip("set PYRIC_BENCH")
	}
}

func TestChild(t *testing.T) {
	if os.Getenv("CHILD") != "" {
		t.Skip("the child")
	}
}

func TestRequired(t *testing.T) {
	if os.Getenv("PYRIC_E2E_REQUIRED") == "" && testing.Short() {
		t.Skip("short")
	}
}

func TestSteps(t *testing.T) { t.Run("good step", func(t *testing.T) {}) }

// conformance: svc.loose
var _ = 0
`
	if err := os.WriteFile(filepath.Join(dir, "a_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "steps.cjs"), []byte("step('script step', () => 1);"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs, loose := indexTests(t, root)
	svc := []*Service{{ID: "svc", Rows: []Row{
		{ID: "svc.ok", Status: Conforming, Tests: []string{"pkg.TestOK", "pkg.TestChild", "pkg.TestRequired", "pkg.TestSteps/good step", "pkg.TestSteps/script step"}},
		{ID: "svc.unlisting", Status: Conforming, Tests: []string{"pkg.TestOK"}},
		{ID: "svc.missing", Status: Conforming, Tests: []string{"pkg.TestGone", "other.TestOK"}},
		{ID: "svc.skipped", Status: Conforming, Tests: []string{"pkg.TestSkipped", "pkg.TestBench"}},
		{ID: "svc.steps", Status: Conforming, Tests: []string{"pkg.TestSteps/no such step", "pkg.TestSteps/gap step"}},
		{ID: "svc.gap", Status: Unverified, Note: "later", Tests: []string{"pkg.TestSkipped", "pkg.TestSteps/gap step"}},
	}}}
	want := []string{
		"svc.missing names pkg.TestGone: no func",
		"svc.missing names other.TestOK: no func",
		"svc.skipped names pkg.TestSkipped, which calls t.Skip unconditionally",
		"svc.skipped names pkg.TestBench, which skips unless an environment variable is set",
		`svc.steps names pkg.TestSteps/no such step: the subtest "no such step" appears nowhere`,
		"svc.steps names pkg.TestSteps/gap step, a known gap",
	}
	checkProblems(t, unproved(svc, pkgs), want)
	problems, n := misnamed(svc, pkgs, loose)
	if n != 4 {
		t.Errorf("%d references, want 4", n)
	}
	checkProblems(t, problems, []string{
		"TestOK (", // svc.nope
		"names the row svc.unlisting, whose tests do not list pkg.TestUnlisted",
		"a comment names the row svc.loose, which does not exist",
	})
}

// checkProblems wants one problem per entry of want, each containing it.
func checkProblems(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, w)
		}
		if !found {
			t.Errorf("no problem says %q; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// TestSeeds checks every seed row's fate names rows that exist, and, when
// PYRIC_SEED_MATRICES names the folder of the original matrices
// (../shared/seeds/matrices), that every row of every matrix has a fate.
func TestSeeds(t *testing.T) {
	all, err := Services()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, s := range all {
		for _, r := range s.Rows {
			rows[r.ID] = true
		}
	}
	have := map[string]map[string]bool{}
	for _, s := range all {
		for _, m := range s.Matrices {
			if have[m] == nil {
				have[m] = map[string]bool{}
			}
		}
		for _, sd := range s.Seeds {
			if have[sd.Matrix][sd.Num] {
				t.Errorf("%s#%s has two fates", sd.Matrix, sd.Num)
			}
			have[sd.Matrix][sd.Num] = true
			for _, id := range sd.Rows {
				if !rows[id] {
					t.Errorf("%s#%s: its fate names the row %s, which does not exist", sd.Matrix, sd.Num, id)
				}
			}
		}
	}
	for m, nums := range have {
		if len(nums) == 0 {
			t.Errorf("the matrix %s has no seeds file", m)
		}
	}
	dir := os.Getenv("PYRIC_SEED_MATRICES")
	if dir == "" {
		t.Log("PYRIC_SEED_MATRICES is not set: the seeds files are not compared with the matrices")
		return
	}
	for m, nums := range have {
		b, err := os.ReadFile(filepath.Join(dir, m+".md"))
		if err != nil {
			t.Fatal(err)
		}
		want := seedNumbers(string(b))
		if len(want) == 0 {
			t.Errorf("%s: no row found in the matrix", m)
		}
		for _, n := range want {
			if !nums[n] {
				t.Errorf("%s#%s has no fate in seeds/%s.tsv", m, n, m)
			}
		}
	}
}

// TestPagesFresh checks the committed pages under docs/conformance and
// the README's score section are what the registry generates now; run
// `go generate ./internal/compat` after changing a row.
func TestPagesFresh(t *testing.T) {
	root := repoRoot(t)
	all, err := Services()
	if err != nil {
		t.Fatal(err)
	}
	pages := Pages(all)
	dir := filepath.Join(root, "docs", "conformance")
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, []byte(want)) {
			t.Errorf("docs/conformance/%s is stale or missing: run `go generate ./internal/compat`", name)
		}
	}
	entries, _ := os.ReadDir(dir)
	var extra []string
	for _, e := range entries {
		if _, ok := pages[e.Name()]; !ok {
			extra = append(extra, e.Name())
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("docs/conformance holds pages no service generates: %v", extra)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadmeSection(string(readme), all)
	if err != nil {
		t.Fatal(err)
	}
	if want != string(readme) {
		t.Error("the README's conformance section is stale: run `go generate ./internal/compat`")
	}
}

var detailsRow = regexp.MustCompile(`(?s)<details class="compat-row".*?</details>`)

// seedNumbers lists the rows of one original matrix page: the last cell
// (#) of each row of a table whose header starts with "API" (a number met
// again, as in the messaging page's second table, is prefixed "admin-"),
// then g1, g2, … for the entries of its gap lists.
func seedNumbers(page string) []string {
	var out []string
	seen := map[string]bool{}
	inAPI := false
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		first := strings.TrimSpace(cells[0])
		if first == "API" || first == "Status" {
			inAPI = first == "API"
			continue
		}
		if strings.Trim(line, "|-: ") == "" || !inAPI {
			continue
		}
		n := strings.TrimSpace(cells[len(cells)-1])
		if seen[n] {
			n = "admin-" + n
		}
		seen[n] = true
		out = append(out, n)
	}
	for i := range detailsRow.FindAllString(page, -1) {
		out = append(out, "g"+strconv.Itoa(i+1))
	}
	return out
}
