package databaseserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/memlimit"
)

// TestAssemblerBudget: WebSocket messages being assembled share the
// handler's in-flight budget; past it the socket's message is refused (the
// session closes with the reason), and a finished message gives its bytes
// back.
func TestAssemblerBudget(t *testing.T) {
	t.Parallel()
	b := &memlimit.Budget{Max: 100}
	a1 := assembler{max: 1 << 16, budget: b}
	a2 := assembler{max: 1 << 16, budget: b}
	frame := strings.Repeat("x", 40)
	feed := func(a *assembler, f string) (string, bool) {
		t.Helper()
		msg, ok, err := a.feed(f)
		if err != nil {
			t.Fatal(err)
		}
		return msg, ok
	}
	feed(&a1, "2")
	feed(&a1, frame) // 40 held
	feed(&a2, "3")
	feed(&a2, frame) // 80 held
	if _, _, err := a2.feed(frame); !errors.Is(err, errFrame) || !strings.Contains(err.Error(), "in flight") {
		t.Fatalf("past the budget: %v", err)
	}
	if b.Used() != 40 {
		t.Fatalf("a refused message holds nothing: used %d", b.Used())
	}
	if msg, ok := feed(&a1, frame); !ok || len(msg) != 80 {
		t.Fatalf("a1's message: %v %d", ok, len(msg))
	}
	if b.Used() != 0 {
		t.Fatalf("a finished message gives its bytes back: used %d", b.Used())
	}
	feed(&a2, "2")
	feed(&a2, frame)
	a2.release() // the session ends mid-message
	if b.Used() != 0 {
		t.Fatalf("a closed session gives its bytes back: used %d", b.Used())
	}
}
