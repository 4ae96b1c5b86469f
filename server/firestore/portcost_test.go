package firestoreserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	gcfirestore "cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server"
)

// The port's cost: a do-nothing Firestore handler (e2e/bench's floor)
// served through the port's setup, one piece at a time, in a process of
// its own, driven by the Go client. TestPortCost prints each setup's
// server CPU, context switches (the wake-ups) and page faults per call;
// it runs only with PYRIC_PORTCOST=1 (it measures, it asserts nothing on
// the figures). The setup "serve" is a real pyric serve (the binary at
// PYRIC_PORTCOST_PYRIC, with e2e/bench's flags and a fresh data
// directory), so the engine's cost shows beside the floor's:
//
//	go build -o /tmp/pyric ./cmd/pyric
//	PYRIC_PORTCOST=1 PYRIC_PORTCOST_PYRIC=/tmp/pyric PYRIC_PORTCOST_ONLY=port+p,serve \
//		go test -run TestPortCost -v ./server/firestore

// portCostEnv, when set, makes this test binary serve the floor with the
// setup it names on a free port, printing "ADDR host:port".
const portCostEnv = "PYRIC_PORTCOST_SERVE"

// portSetups are the setups compared: the floor's grpc.NewServer()+Serve,
// each of the port's options alone, and the port as NewPort builds it.
var portSetups = []string{"plain", "codec", "gate", "workers", "msgsize", "listener", "port"}

func TestMain(m *testing.M) {
	if v := os.Getenv(portCostEnv); v != "" {
		servePortSetup(v)
	}
	os.Exit(m.Run())
}

func servePortSetup(setup string) {
	// A setup ending in "+p" runs with one processor more, as pyric serve
	// does (server.SpareProcessor).
	if base, ok := strings.CutSuffix(setup, "+p"); ok {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
		setup = base
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var opts []grpc.ServerOption
	switch setup {
	case "codec":
		opts = []grpc.ServerOption{grpc.ForceServerCodec(lenientCodec{})}
	case "gate":
		opts = []grpc.ServerOption{grpc.UnaryInterceptor(gateUnary), grpc.StreamInterceptor(gateStream)}
	case "workers":
		opts = portOptions()[len(portOptions())-1:]
	case "msgsize":
		opts = []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize)}
	case "port":
		opts = portOptions()
	}
	if setup == "engine" {
		serveEngine(l)
	}
	g := grpc.NewServer(opts...)
	pb.RegisterFirestoreServer(g, nothing{})
	fmt.Printf("ADDR %s\n", l.Addr())
	if setup == "listener" || setup == "port" {
		err = server.NewPort(l, g, nil).Serve()
	} else {
		err = g.Serve(l)
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// nothing answers a set and a get with canned replies of their shape.
type nothing struct {
	pb.UnimplementedFirestoreServer
}

func (nothing) Commit(_ context.Context, r *pb.CommitRequest) (*pb.CommitResponse, error) {
	now := timestamppb.Now()
	res := make([]*pb.WriteResult, len(r.Writes))
	for i := range res {
		res[i] = &pb.WriteResult{UpdateTime: now}
	}
	return &pb.CommitResponse{WriteResults: res, CommitTime: now}, nil
}

func (nothing) BatchGetDocuments(r *pb.BatchGetDocumentsRequest, s pb.Firestore_BatchGetDocumentsServer) error {
	now := timestamppb.Now()
	for _, name := range r.Documents {
		d := &pb.Document{Name: name, CreateTime: now, UpdateTime: now, Fields: map[string]*pb.Value{
			"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: 1}},
			"s": {ValueType: &pb.Value_StringValue{StringValue: "x"}},
		}}
		if err := s.Send(&pb.BatchGetDocumentsResponse{Result: &pb.BatchGetDocumentsResponse_Found{Found: d}, ReadTime: now}); err != nil {
			return err
		}
	}
	return nil
}

type ownerCreds struct{}

func (ownerCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer owner"}, nil
}
func (ownerCreds) RequireTransportSecurity() bool { return false }

func TestPortCost(t *testing.T) {
	if os.Getenv("PYRIC_PORTCOST") != "1" {
		t.Skip("measures the port's setups; PYRIC_PORTCOST=1 runs it")
	}
	n := benchkit.EnvInt("PYRIC_PORTCOST_N", 3000)
	setups := benchkit.EnvList("PYRIC_PORTCOST_ONLY", portSetups)
	rounds := benchkit.EnvInt("PYRIC_PORTCOST_ROUNDS", 3)
	type fig struct{ cpu, sw, flt [2]float64 }
	res := map[string]*fig{}
	for range rounds {
		for _, setup := range setups {
			f := res[setup]
			if f == nil {
				f = &fig{}
				res[setup] = f
			}
			cpu, sw, flt := measurePortSetup(t, setup, n)
			for i := range 2 {
				f.cpu[i] += cpu[i] / float64(rounds)
				f.sw[i] += sw[i] / float64(rounds)
				f.flt[i] += flt[i] / float64(rounds)
			}
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%-10s %10s %10s %10s %10s %10s %10s\n", "setup", "set µs/op", "set sw/op", "set flt/op", "get µs/op", "get sw/op", "get flt/op")
	for _, setup := range setups {
		f := res[setup]
		fmt.Fprintf(&out, "%-10s %10.1f %10.2f %10.2f %10.1f %10.2f %10.2f\n", setup, f.cpu[0], f.sw[0], f.flt[0], f.cpu[1], f.sw[1], f.flt[1])
	}
	t.Logf("server CPU, context switches and page faults per call, %d calls, mean of %d rounds:\n%s", n, rounds, out.String())
}

// measurePortSetup starts the floor with setup and returns its CPU (µs),
// context switches and page faults per set and per get.
func measurePortSetup(t *testing.T, setup string, n int) (cpu, sw, flt [2]float64) {
	addr, pid := startPortSetup(t, setup)
	ctx := context.Background()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(ownerCreds{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := gcfirestore.NewClient(ctx, "demo-cost", option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	doc := func(i int) *gcfirestore.DocumentRef { return c.Doc("c/d" + strconv.Itoa(i%100)) }
	ops := []func(i int) error{
		func(i int) error { _, err := doc(i).Set(ctx, map[string]any{"i": i, "s": "x"}); return err },
		func(i int) error { _, err := doc(i).Get(ctx); return err },
	}
	for k, op := range ops {
		for i := range 200 { // warm up: connection, stacks
			if err := op(i); err != nil {
				t.Fatal(err)
			}
		}
		c0, s0, f0 := benchkit.ProcCPU(pid), benchkit.ContextSwitches(pid), benchkit.PageFaults(pid)
		for i := range n {
			if err := op(i); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
		cpu[k] = float64(benchkit.ProcCPU(pid)-c0) / float64(time.Microsecond) / float64(n)
		sw[k] = float64(benchkit.ContextSwitches(pid)-s0) / float64(n)
		flt[k] = float64(benchkit.PageFaults(pid)-f0) / float64(n)
	}
	return cpu, sw, flt
}

func benchkitCommand(setup string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), portCostEnv+"="+setup)
	cmd.Stderr = os.Stderr
	return cmd
}

// serveEngine serves an in-memory engine through NewPort, as e2e/bench's
// pyric-memory does.
func serveEngine(l net.Listener) {
	sb, err := sandbox.Open(sandbox.Options{Project: "demo-cost", Services: []service.Registration{firestore.Registration(firestore.Options{})}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	eng, _ := sandbox.Lookup[*firestore.Engine](sb)
	port, _ := NewPort(l, New(Options{Engine: eng, DefaultProject: "demo-cost"}))
	fmt.Printf("ADDR %s\n", l.Addr())
	fmt.Fprintln(os.Stderr, port.Serve())
	os.Exit(1)
}

// startPortSetup starts the floor with setup, or for "ext" names the
// server at PYRIC_PORTCOST_ADDR whose process is PYRIC_PORTCOST_PID (a
// running pyric serve), and returns its address and process id.
func startPortSetup(t *testing.T, setup string) (string, int) {
	if setup == "ext" {
		pid, _ := strconv.Atoi(os.Getenv("PYRIC_PORTCOST_PID"))
		return os.Getenv("PYRIC_PORTCOST_ADDR"), pid
	}
	if setup == "serve" {
		return startServe(t)
	}
	cmd := benchkitCommand(setup)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var line [64]byte
	m, _ := out.Read(line[:])
	addr, ok := strings.CutPrefix(strings.TrimSpace(string(line[:m])), "ADDR ")
	if !ok {
		t.Fatalf("%s: %q", setup, line[:m])
	}
	return addr, cmd.Process.Pid
}

var servicePort = regexp.MustCompile(`(?m)^\s*--([a-z]+)-port N`)

// startServe runs the pyric serve binary at PYRIC_PORTCOST_PYRIC as
// e2e/bench's pyric-serve does (default durable store, session capture
// on, every port free, no Studio or hub) on a fresh data directory, and
// returns its Firestore address and process id.
func startServe(t *testing.T) (string, int) {
	bin := os.Getenv("PYRIC_PORTCOST_PYRIC")
	if bin == "" {
		t.Skip("setup serve needs PYRIC_PORTCOST_PYRIC, a pyric binary (go build -o /tmp/pyric ./cmd/pyric)")
	}
	dir := t.TempDir()
	args := []string{"serve", "--json", "--quiet", "--project", "demo-cost", "--data-dir", filepath.Join(dir, "data"),
		"--studio-port", "-1", "--hub-port", "-1"}
	// Every service's port picked free (e2e/bench lists them from
	// backend.Catalog, which imports this package): the ones the binary's
	// help names.
	help, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	for _, m := range servicePort.FindAllStringSubmatch(string(help), -1) {
		if m[1] != "studio" && m[1] != "hub" {
			args = append(args, "--"+m[1]+"-port", "0")
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stderr = io.Discard // its banner (no rules files here)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var ports map[string]string
	if err == nil {
		err = json.Unmarshal([]byte(line), &ports)
	}
	if err != nil || ports["firestore"] == "" {
		t.Fatalf("pyric serve --json: %q (%v)", line, err)
	}
	go io.Copy(io.Discard, out)
	return ports["firestore"], cmd.Process.Pid
}
