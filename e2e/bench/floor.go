package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"

	"github.com/pyric/pyric/internal/benchkit"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The floor: a Firestore gRPC server that does nothing — it stores
// nothing and answers every call of the workload with a canned reply of
// the right shape — run as its own process, as pyric-serve and the
// official emulator are. Through the same client, no server can be faster
// than it on this machine, so floor/official is the highest ratio any
// server could reach here, and pyric-serve/floor says how close pyric is.

// floorEnv, when set, makes this binary the floor server: its value is
// the number of documents a query returns.
const floorEnv = "PYRIC_BENCH_FLOOR"

// StartFloor runs the floor in a child process (this binary, re-executed)
// whose queries return results documents.
func StartFloor(results int) (*Target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-test.run=^$") // a test binary runs no test
	cmd.Env = append(os.Environ(), floorEnv+"="+strconv.Itoa(results))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "FLOOR ")
	if err != nil || !ok {
		stop()
		return nil, fmt.Errorf("the floor server did not start (%q, %v)", line, err)
	}
	return &Target{Name: "floor", Addr: addr, Notes: "a do-nothing Firestore gRPC server, its own process: the transport's and client's cost alone",
		CPU: func() time.Duration { return benchkit.ProcCPU(cmd.Process.Pid) }, Stop: stop}, nil
}

// serveFloorIfAsked serves the floor and never returns when this process
// was started as one.
func serveFloorIfAsked() {
	v := os.Getenv(floorEnv)
	if v == "" {
		return
	}
	results, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(2)
	}
	fmt.Printf("FLOOR %s\n", l.Addr())
	g := grpc.NewServer()
	pb.RegisterFirestoreServer(g, floor{results: results})
	err = g.Serve(l)
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}

type floor struct {
	pb.UnimplementedFirestoreServer
	results int
}

// floorDoc is a document of the workload's shape: {i, g, s}.
func floorDoc(name string, i int64, now *timestamppb.Timestamp) *pb.Document {
	return &pb.Document{Name: name, CreateTime: now, UpdateTime: now, Fields: map[string]*pb.Value{
		"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: i}},
		"g": {ValueType: &pb.Value_IntegerValue{IntegerValue: i % 10}},
		"s": {ValueType: &pb.Value_StringValue{StringValue: "x"}},
	}}
}

func (floor) Commit(_ context.Context, r *pb.CommitRequest) (*pb.CommitResponse, error) {
	now := timestamppb.Now()
	res := make([]*pb.WriteResult, len(r.Writes))
	for i := range res {
		res[i] = &pb.WriteResult{UpdateTime: now}
	}
	return &pb.CommitResponse{WriteResults: res, CommitTime: now}, nil
}

func (floor) BatchGetDocuments(r *pb.BatchGetDocumentsRequest, s pb.Firestore_BatchGetDocumentsServer) error {
	now := timestamppb.Now()
	for _, name := range r.Documents {
		if err := s.Send(&pb.BatchGetDocumentsResponse{Result: &pb.BatchGetDocumentsResponse_Found{Found: floorDoc(name, 1, now)}, ReadTime: now}); err != nil {
			return err
		}
	}
	return nil
}

func (f floor) RunQuery(r *pb.RunQueryRequest, s pb.Firestore_RunQueryServer) error {
	now := timestamppb.Now()
	coll := ""
	if q := r.GetStructuredQuery(); q != nil && len(q.From) > 0 {
		coll = q.From[0].CollectionId
	}
	for i := range f.results {
		d := floorDoc(fmt.Sprintf("%s/%s/d%05d", r.Parent, coll, i*10), int64(i*10), now)
		if err := s.Send(&pb.RunQueryResponse{Document: d, ReadTime: now}); err != nil {
			return err
		}
	}
	return s.Send(&pb.RunQueryResponse{ReadTime: now, ContinuationSelector: &pb.RunQueryResponse_Done{Done: true}})
}

func (floor) BeginTransaction(context.Context, *pb.BeginTransactionRequest) (*pb.BeginTransactionResponse, error) {
	return &pb.BeginTransactionResponse{Transaction: []byte(strconv.FormatInt(time.Now().UnixNano(), 36))}, nil
}

func (floor) Rollback(context.Context, *pb.RollbackRequest) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}
