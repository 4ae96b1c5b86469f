package backend

import (
	"context"
	"slices"
	"testing"
)

// Without codebases there is no functions service, port or banner row.
func TestNoFunctionsWithoutCodebases(t *testing.T) {
	b, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	if b.Functions() != nil || b.Addr(Functions) != "" || b.Sandbox.Service(Functions) != nil {
		t.Errorf("functions present without codebases: engine %v addr %q", b.Functions(), b.Addr(Functions))
	}
	for _, e := range b.Endpoints() {
		if e.Service == Functions {
			t.Errorf("endpoint %+v", e)
		}
	}
	// Functions follows every service its workers reach (they get every
	// address before them); only Hosting, which calls functions, follows.
	cat := Catalog()
	at := slices.IndexFunc(cat, func(s Spec) bool { return s.Service == Functions })
	if at < 0 || cat[at].DefaultPort != 5001 {
		t.Fatalf("catalog %+v: no functions on 5001", cat)
	}
	for _, s := range cat[at+1:] {
		if s.Service != Hosting {
			t.Errorf("catalog %+v: %s comes after functions, whose workers would not see it", cat, s.Service)
		}
	}
}
