package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// debugPprofEnv names the hidden debugging switch of pyric serve: set to a
// loopback host:port, the process serves Go's profiles (heap, goroutines,
// CPU) at /debug/pprof/ there, so its memory can be measured from outside
// (go tool pprof http://ADDR/debug/pprof/heap), with the mutex and block
// profiles sampling. It is not a flag because
// no user needs it; it refuses any address but a loopback one because the
// profiles show the data the process holds.
const debugPprofEnv = "PYRIC_DEBUG_PPROF"

// startDebugPprof serves the profiles when debugPprofEnv is set; a bad
// address is reported on w and otherwise ignored (it is a debugging aid).
func startDebugPprof(getenv func(string) string, w io.Writer) {
	addr := getenv(debugPprofEnv)
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !isLoopback(host) {
		fmt.Fprintf(w, "pyric: %s=%q ignored: it must be a loopback host:port\n", debugPprofEnv, addr)
		return
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(w, "pyric: %s: %v\n", debugPprofEnv, err)
		return
	}
	// What a request waits on (locks, channels) is as much a question as
	// what it spends: sample contended mutexes and blocking (at ~1 ms of
	// blocking per sample) for the mutex and block profiles.
	runtime.SetMutexProfileFraction(10)
	runtime.SetBlockProfileRate(int(time.Millisecond))
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	fmt.Fprintf(w, "pyric: serving Go profiles on http://%s/debug/pprof/\n", l.Addr())
	go http.Serve(l, mux)
}
