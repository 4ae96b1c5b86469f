package server

import (
	"runtime"
	"testing"
)

// SpareProcessor gives the runtime one P more than the CPUs, unless the
// user chose GOMAXPROCS, and the heavy-work gate keeps counting its slots
// on the CPUs: the spare P is for light requests only.
func TestSpareProcessor(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	runtime.GOMAXPROCS(processors)
	user := func(name string) string {
		if name == "GOMAXPROCS" {
			return "7"
		}
		return ""
	}
	if SpareProcessor(user) || runtime.GOMAXPROCS(0) != processors {
		t.Fatalf("with GOMAXPROCS set by the user: GOMAXPROCS %d, want it left at %d", runtime.GOMAXPROCS(0), processors)
	}
	unset := func(string) string { return "" }
	if !SpareProcessor(unset) {
		t.Fatal("SpareProcessor declined without GOMAXPROCS set")
	}
	if got := runtime.GOMAXPROCS(0); got != processors+1 {
		t.Fatalf("GOMAXPROCS %d, want the %d processors + 1", got, processors)
	}
	if SpareProcessor(unset) || runtime.GOMAXPROCS(0) != processors+1 {
		t.Fatalf("a second call changed GOMAXPROCS to %d", runtime.GOMAXPROCS(0))
	}
	if _, _, slots := HeavyWork(); slots != max(1, processors-1) {
		t.Fatalf("heavy work slots %d, want %d: one fewer than the CPUs, not the Ps", slots, max(1, processors-1))
	}
}
