package backend

import (
	"context"
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
	if len(Catalog()) == 0 || Catalog()[len(Catalog())-1].Service != Functions || Catalog()[len(Catalog())-1].DefaultPort != 5001 {
		t.Errorf("catalog %+v: functions must come last (its workers get every other address), on 5001", Catalog())
	}
}
