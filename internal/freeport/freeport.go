// Package freeport picks loopback ports for the tests and harnesses that
// must name a port before the server that binds it starts: a child
// process given --port flags, a firebase.json written for firebase-tools.
//
// Asking the kernel for port 0 and closing the listener is not enough
// there. That port comes from the ephemeral range, the same range every
// outgoing connection's local port and every other listener on port 0 is
// taken from, so on a busy machine (a whole `go test ./...`) something
// else takes it before the child binds it. The ports picked here lie
// below the ephemeral range, where the kernel hands out none, and each
// is claimed for the life of the picking process by a lock on a file in
// the temporary directory, so two processes picking at once never get
// the same port either.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// low is the first port picked from: above the Firebase emulators'
// default ports (4000–9499), which a developer's own emulators hold.
const low = 15000

var (
	mu sync.Mutex
	// claimed holds the lock files of the ports this process picked: they
	// stay open (and locked) until the process exits.
	claimed = map[int]*os.File{}
)

// Pick returns n distinct loopback ports that nothing listens on now and
// that no other process picking ports through this package holds.
func Pick(n int) ([]int, error) {
	out := make([]int, 0, n)
	for len(out) < n {
		p, err := Run(1)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Run returns the first of n consecutive free ports (for a server that
// numbers further listeners after its own port, such as Hosting's sites or
// an inspector per codebase).
func Run(n int) (int, error) {
	high := ephemeralLow()
	if high-low < 1000 {
		return 0, fmt.Errorf("freeport: the ephemeral range starts at %d, leaving no ports below it to pick from", high)
	}
	mu.Lock()
	defer mu.Unlock()
	for range 2000 {
		base := low + rand.IntN(high-low-n)
		if ok := claimRun(base, n); ok {
			return base, nil
		}
	}
	return 0, errors.New("freeport: no free loopback port found below the ephemeral range")
}

// claimRun claims ports base..base+n-1, all or none.
func claimRun(base, n int) bool {
	var got []int
	for p := base; p < base+n; p++ {
		if !claim(p) {
			for _, q := range got {
				claimed[q].Close()
				delete(claimed, q)
			}
			return false
		}
		got = append(got, p)
	}
	return true
}

// claim locks port p's file and checks that p can be bound now.
func claim(p int) bool {
	if _, ok := claimed[p]; ok {
		return false
	}
	dir := filepath.Join(os.TempDir(), "pyric-freeport")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return false
	}
	if err := lock(f); err != nil {
		f.Close()
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		f.Close()
		return false
	}
	l.Close()
	claimed[p] = f
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				return n
			}
		}
	}
	return 32768 // Linux's default; BSDs and macOS start at 49152
}
