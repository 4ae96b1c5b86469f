package eval

import (
	"testing"

	"github.com/pyric/pyric/rules/value"
)

// TestStandardIsImplemented checks the one table is complete: every
// standard declaration names an implementation (per receiver type for a
// method), no name is declared twice for the same receiver, namespace or
// bare call (a second entry would silently replace the first), and the
// evaluator's index holds exactly what the table declares.
func TestStandardIsImplemented(t *testing.T) {
	seen := map[string]bool{}
	count := 0
	for _, d := range Standard {
		switch d.Kind {
		case Method:
			if len(d.Receivers) == 0 {
				t.Errorf("method %s has no receiver", d.Name)
			}
			for _, r := range d.Receivers {
				key := "method " + r.Type.String() + "." + d.Name + "()"
				if r.Impl == nil {
					t.Errorf("%s is declared without an implementation", key)
				}
				if seen[key] {
					t.Errorf("%s is declared twice", key)
				}
				seen[key] = true
				count++
				if std.methods[r.Type][d.Name] == nil || std.methodSets[d.Name][r.Type] == nil {
					t.Errorf("%s is declared but not bound", key)
				}
			}
		case Namespaced, Global:
			key := d.Namespace + "." + d.Name + "()"
			if d.Func == nil {
				t.Errorf("%s is declared without an implementation", key)
			}
			if seen[key] {
				t.Errorf("%s is declared twice", key)
			}
			seen[key] = true
			count++
		}
	}
	bound := len(std.globals)
	for _, ms := range std.methods {
		bound += len(ms)
	}
	for _, fs := range std.namespaces {
		bound += len(fs)
	}
	if bound != count {
		t.Errorf("the evaluator binds %d implementations, the table declares %d", bound, count)
	}
}

// TestSizeReceivers pins size() to the five sized types (and not, say,
// int): production's "Function not found error" for 1.size().
func TestSizeReceivers(t *testing.T) {
	for typ := value.TNull; typ <= value.TError; typ++ {
		_, ok := std.methods[typ]["size"]
		want := typ == value.TString || typ == value.TBytes || typ == value.TList || typ == value.TMap || typ == value.TSet
		if ok != want {
			t.Errorf("size() on %s: bound %v, want %v", typ, ok, want)
		}
	}
}
