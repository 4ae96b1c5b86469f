package studio_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestWebModulesNoCycle: the UI's modules (studio/web/src) import each
// other without a circle, and none imports the shell (main.js): pages
// share the kit, the shell imports the pages.
func TestWebModulesNoCycle(t *testing.T) {
	files, err := filepath.Glob("web/src/*.js")
	if err != nil || len(files) < 5 {
		t.Fatalf("modules: %v %v", files, err)
	}
	imp := regexp.MustCompile(`(?m)^import [^;]*? from '\./([a-z]+\.js)';`)
	graph := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		graph[name] = []string{}
		for _, m := range imp.FindAllStringSubmatch(string(b), -1) {
			graph[name] = append(graph[name], m[1])
			if m[1] == "main.js" {
				t.Errorf("%s imports the shell main.js", name)
			}
		}
	}
	if !slices.Contains(graph["main.js"], "kit.js") || !slices.Contains(graph["traffic.js"], "kit.js") {
		t.Fatalf("the import scan found no imports: %v", graph)
	}
	// Depth-first search for a back edge.
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var path []string
	var visit func(string)
	visit = func(n string) {
		color[n] = grey
		path = append(path, n)
		for _, m := range graph[n] {
			switch color[m] {
			case grey:
				t.Errorf("import circle: %s → %s", strings.Join(path, " → "), m)
			case white:
				visit(m)
			}
		}
		path = path[:len(path)-1]
		color[n] = black
	}
	for n := range graph {
		if color[n] == white {
			visit(n)
		}
	}
}
