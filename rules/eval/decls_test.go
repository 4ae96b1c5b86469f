package eval

import (
	"slices"
	"testing"
)

// TestDeclsMatchImplementations keeps the declaration table and the
// implementations in step: every implemented function is declared, on the
// receivers it is implemented for, and every declaration is implemented.
func TestDeclsMatchImplementations(t *testing.T) {
	for typ, ms := range methods {
		for name := range ms {
			d, ok := Standard.Lookup(Method, "", name)
			if !ok || !slices.Contains(d.Receivers, typ) {
				t.Errorf("method %s.%s is implemented but not declared", typ, name)
			}
		}
	}
	for space, fs := range stdNamespaces {
		for name := range fs {
			if _, ok := Standard.Lookup(Namespaced, space, name); !ok {
				t.Errorf("%s.%s is implemented but not declared", space, name)
			}
		}
	}
	for name := range globalFuncs {
		if _, ok := Standard.Lookup(Global, "", name); !ok {
			t.Errorf("%s() is implemented but not declared", name)
		}
	}
	for _, d := range Standard {
		switch d.Kind {
		case Method:
			for _, r := range d.Receivers {
				if _, ok := methods[r][d.Name]; !ok && d.Name != "size" {
					t.Errorf("method %s.%s is declared but not implemented", r, d.Name)
				}
			}
		case Namespaced:
			if _, ok := stdNamespaces[d.Namespace][d.Name]; !ok {
				t.Errorf("%s.%s is declared but not implemented", d.Namespace, d.Name)
			}
		case Global:
			if _, ok := globalFuncs[d.Name]; !ok {
				t.Errorf("%s() is declared but not implemented", d.Name)
			}
		}
	}
}
