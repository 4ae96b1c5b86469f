package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickBelowEphemeralRangeDistinctAndBindable(t *testing.T) {
	ports, err := Pick(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < low || p >= ephemeralLow() {
			t.Errorf("port %d is outside [%d, %d)", p, low, ephemeralLow())
		}
		if seen[p] {
			t.Errorf("port %d picked twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("picked port %d cannot be bound: %v", p, err)
			continue
		}
		l.Close()
	}
}

// TestClaimedPortRefusedToAnotherPicker: a port one picker holds is not
// given to another (here a second open of its lock file, as another
// process would make).
func TestClaimedPortRefusedToAnotherPicker(t *testing.T) {
	p, err := Run(1)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	f := claimed[p]
	delete(claimed, p) // forget it here, as another process never knew it
	ok := claim(p)
	claimed[p] = f
	mu.Unlock()
	if ok {
		t.Fatalf("port %d was claimed twice", p)
	}
}

func TestRunIsConsecutive(t *testing.T) {
	base, err := Run(8)
	if err != nil {
		t.Fatal(err)
	}
	for p := base; p < base+8; p++ {
		if claimed[p] == nil {
			t.Errorf("port %d of the run is not claimed", p)
		}
	}
}

// TestBusyPortSkipped: a port something listens on is never picked.
func TestBusyPortSkipped(t *testing.T) {
	p, err := Run(1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mu.Lock()
	claimed[p].Close() // released: only the listener stands in the way now
	delete(claimed, p)
	ok := claim(p)
	mu.Unlock()
	if ok {
		t.Fatalf("port %d, in use, was claimed", p)
	}
}
