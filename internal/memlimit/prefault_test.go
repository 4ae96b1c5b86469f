package memlimit

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/prefault"
)

// prefaultChildEnv makes TestHeadroomIsPrefaulted's child process (a
// fresh heap) run the measurement.
const prefaultChildEnv = "PYRIC_MEMLIMIT_PREFAULT_CHILD"

// A process that starts the policy and begins to allocate has its
// headroom mapped: the small objects it allocates next, 16 MiB of them,
// fault in few pages (~110), where a heap growing into fresh memory
// faults its pages in as it goes (~560 on the machine this was written
// on, where the kernel maps more than a page a fault). Measured in a
// child process, whose heap is fresh.
func TestHeadroomIsPrefaulted(t *testing.T) {
	if raceOn {
		t.Skip("the race detector faults its shadow memory in beside the heap's")
	}
	if !prefault.Available() {
		t.Skip("the kernel does not map pages ahead (MADV_POPULATE_WRITE)")
	}
	if benchkit.PageFaults(0) == 0 {
		t.Skip("no page fault count here (/proc)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeadroomIsPrefaultedChild$", "-test.v")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, prefaultChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var faults int
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "FAULTS "); ok {
			faults, _ = strconv.Atoi(v)
		}
	}
	t.Logf("%d page faults allocating 16 MiB after the headroom was mapped", faults)
	if faults > 300 {
		t.Errorf("%d page faults allocating 16 MiB of small objects: the headroom was not mapped (~110 when it is, ~560 when not)", faults)
	}
}

func TestHeadroomIsPrefaultedChild(t *testing.T) {
	if os.Getenv(prefaultChildEnv) != "1" {
		t.Skip("the child of TestHeadroomIsPrefaulted")
	}
	if !Start() {
		t.Fatal("the policy did not start")
	}
	// Allocating past the trigger sets off the collection after which
	// the headroom is mapped.
	var keep [][]byte
	for range (prefaultTrigger + 1<<20) >> 10 {
		keep = append(keep, make([]byte, 1<<10))
	}
	waitPrefaulted(t)
	before := benchkit.PageFaults(0)
	var hold [][]byte
	for range 16 << 10 {
		hold = append(hold, make([]byte, 1<<10))
	}
	fmt.Printf("FAULTS %d\n", benchkit.PageFaults(0)-before)
	runtime.KeepAlive(keep)
	runtime.KeepAlive(hold)
}

// waitPrefaulted waits until the headroom's mapping, armed by Start, is
// done (collecting, which sets it off, while it is due): the limit moves
// while it holds its block.
func waitPrefaulted(t *testing.T) {
	t.Helper()
	if !await.Poll(5*time.Second, func() bool {
		if prefaultState.Load() == prefaultDue {
			runtime.GC()
		}
		return prefaultState.Load() == prefaultIdle
	}) {
		t.Fatal("the headroom was not mapped")
	}
}
