package firestoreserver

import (
	"context"
	"errors"
	"io"
	"sync"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

// GRPC is the google.firestore.v1.Firestore gRPC service over a Server's
// engine. Every method derives the caller from the Authorization metadata
// (IdentityFromContext), passes the request proto to the engine unchanged
// and maps errors through Status; the Write and Listen streams add only the
// stream bookkeeping the SDKs expect (stream tokens; the engine's listen
// queue). Project and database come from the request's resource names
// only: a request that names none is INVALID_ARGUMENT, as on the official
// emulator (`Database name "" lacks "projects" at index 0.`), whatever its
// routing metadata says.
type GRPC struct {
	pb.UnimplementedFirestoreServer

	s *Server

	drainOnce sync.Once
	drain     chan struct{}
	// alsoDrain ends the port's WebChannel sessions with the streams.
	alsoDrain func()
}

// NewGRPC returns the gRPC service of s.
func NewGRPC(s *Server) *GRPC {
	return &GRPC{s: s, drain: make(chan struct{})}
}

// Register registers the service on r (a *grpc.Server).
func (g *GRPC) Register(r grpc.ServiceRegistrar) { pb.RegisterFirestoreServer(r, g) }

// Drain ends every open Listen and Write stream with UNAVAILABLE (clients
// reconnect and resume) and refuses new ones, so a graceful shutdown does
// not wait on long-lived streams.
func (g *GRPC) Drain() {
	g.drainOnce.Do(func() {
		close(g.drain)
		if g.alsoDrain != nil {
			g.alsoDrain()
		}
	})
}

func (g *GRPC) draining() bool {
	select {
	case <-g.drain:
		return true
	default:
		return false
	}
}

var errDraining = status.Error(codes.Unavailable, "The server is shutting down; retry.")

// call derives the caller's identity.
func call(ctx context.Context) (identity.Identity, error) {
	who, err := IdentityFromContext(ctx)
	if err != nil {
		return who, Err(err)
	}
	return who, nil
}

// unary runs one engine call for a unary RPC: the caller's identity from
// the metadata, the call, and its error through Status.
func unary[Req, Resp any](ctx context.Context, req Req, f func(context.Context, identity.Identity, Req) (Resp, error)) (Resp, error) {
	who, err := call(ctx)
	if err != nil {
		var zero Resp
		return zero, err
	}
	r, err := f(ctx, who, req)
	return r, Err(err)
}

// serverStream runs one engine call for a server-streaming RPC and sends
// its responses in order.
func serverStream[Req, Resp any](ctx context.Context, req Req, send func(Resp) error, f func(context.Context, identity.Identity, Req) ([]Resp, error)) error {
	rs, err := unary(ctx, req, f)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := send(r); err != nil {
			return err
		}
	}
	return nil
}

// GetDocument implements pb.FirestoreServer.
func (g *GRPC) GetDocument(ctx context.Context, req *pb.GetDocumentRequest) (*pb.Document, error) {
	return unary(ctx, req, g.s.opts.Engine.GetDocument)
}

// ListDocuments implements pb.FirestoreServer.
func (g *GRPC) ListDocuments(ctx context.Context, req *pb.ListDocumentsRequest) (*pb.ListDocumentsResponse, error) {
	return unary(ctx, req, g.s.opts.Engine.ListDocuments)
}

// CreateDocument implements pb.FirestoreServer.
func (g *GRPC) CreateDocument(ctx context.Context, req *pb.CreateDocumentRequest) (*pb.Document, error) {
	return unary(ctx, req, g.s.opts.Engine.CreateDocument)
}

// UpdateDocument implements pb.FirestoreServer.
func (g *GRPC) UpdateDocument(ctx context.Context, req *pb.UpdateDocumentRequest) (*pb.Document, error) {
	return unary(ctx, req, g.s.opts.Engine.UpdateDocument)
}

// DeleteDocument implements pb.FirestoreServer.
func (g *GRPC) DeleteDocument(ctx context.Context, req *pb.DeleteDocumentRequest) (*emptypb.Empty, error) {
	return unary(ctx, req, func(ctx context.Context, who identity.Identity, req *pb.DeleteDocumentRequest) (*emptypb.Empty, error) {
		return &emptypb.Empty{}, g.s.opts.Engine.DeleteDocument(ctx, who, req)
	})
}

// BatchGetDocuments implements pb.FirestoreServer; the documents found
// go out in the encoding the store keeps of them (wireDocuments).
func (g *GRPC) BatchGetDocuments(req *pb.BatchGetDocumentsRequest, stream pb.Firestore_BatchGetDocumentsServer) error {
	ctx := stream.Context()
	return serverStream(ctx, req, stream.Send, func(ctx context.Context, who identity.Identity, req *pb.BatchGetDocumentsRequest) ([]*pb.BatchGetDocumentsResponse, error) {
		out, err := g.s.opts.Engine.BatchGetDocuments(ctx, who, req)
		if err != nil {
			return nil, err
		}
		db, err := firestore.ParseDatabaseName(req.GetDatabase())
		if err != nil {
			return out, nil // the engine parsed it: unreachable
		}
		wireDocuments(g.s.opts.Engine, db, out, (*pb.BatchGetDocumentsResponse).GetFound, setFound)
		return out, nil
	})
}

// setFound makes d the document r found, in the Found result r has (the
// engine's, made for this response alone): a new one costs an allocation.
func setFound(r *pb.BatchGetDocumentsResponse, d *pb.Document) {
	if f, ok := r.Result.(*pb.BatchGetDocumentsResponse_Found); ok {
		f.Found = d
		return
	}
	r.Result = &pb.BatchGetDocumentsResponse_Found{Found: d}
}

// wireDocuments replaces the documents of a read's responses (doc of each,
// nil for none) by their wire form (firestore.Engine.WireDocuments) with
// set, just before they are sent: marshaling a stored document's kept
// encoding costs a copy, encoding it again most of a small read's work.
func wireDocuments[R any](e *firestore.Engine, db firestore.DatabaseName, out []R, doc func(R) *pb.Document, set func(R, *pb.Document)) {
	docs := make([]*pb.Document, len(out))
	for i, r := range out {
		docs[i] = doc(r)
	}
	e.WireDocuments(db, docs)
	for i, r := range out {
		if d := docs[i]; d != nil && d != doc(r) {
			set(r, d)
		}
	}
}

// BeginTransaction implements pb.FirestoreServer.
func (g *GRPC) BeginTransaction(ctx context.Context, req *pb.BeginTransactionRequest) (*pb.BeginTransactionResponse, error) {
	return unary(ctx, req, g.s.opts.Engine.BeginTransaction)
}

// Commit implements pb.FirestoreServer.
func (g *GRPC) Commit(ctx context.Context, req *pb.CommitRequest) (*pb.CommitResponse, error) {
	return unary(ctx, req, g.s.opts.Engine.Commit)
}

// Rollback implements pb.FirestoreServer.
func (g *GRPC) Rollback(ctx context.Context, req *pb.RollbackRequest) (*emptypb.Empty, error) {
	return unary(ctx, req, func(ctx context.Context, who identity.Identity, req *pb.RollbackRequest) (*emptypb.Empty, error) {
		return &emptypb.Empty{}, g.s.opts.Engine.Rollback(ctx, who, req)
	})
}

// RunQuery implements pb.FirestoreServer; the documents go out in the
// encoding the store keeps of them (wireDocuments).
func (g *GRPC) RunQuery(req *pb.RunQueryRequest, stream pb.Firestore_RunQueryServer) error {
	return serverStream(stream.Context(), req, stream.Send, func(ctx context.Context, who identity.Identity, req *pb.RunQueryRequest) ([]*pb.RunQueryResponse, error) {
		out, err := g.s.opts.Engine.RunQuery(ctx, who, req)
		if err != nil {
			return nil, err
		}
		db, _, err := firestore.ParseParentName(req.GetParent())
		if err != nil {
			return out, nil // the engine parsed it: unreachable
		}
		wireDocuments(g.s.opts.Engine, db, out, (*pb.RunQueryResponse).GetDocument, func(r *pb.RunQueryResponse, d *pb.Document) { r.Document = d })
		return out, nil
	})
}

// RunAggregationQuery implements pb.FirestoreServer.
func (g *GRPC) RunAggregationQuery(req *pb.RunAggregationQueryRequest, stream pb.Firestore_RunAggregationQueryServer) error {
	return serverStream(stream.Context(), req, stream.Send, g.s.opts.Engine.RunAggregationQuery)
}

// PartitionQuery implements pb.FirestoreServer.
func (g *GRPC) PartitionQuery(ctx context.Context, req *pb.PartitionQueryRequest) (*pb.PartitionQueryResponse, error) {
	return unary(ctx, req, g.s.opts.Engine.PartitionQuery)
}

// ListCollectionIds implements pb.FirestoreServer.
func (g *GRPC) ListCollectionIds(ctx context.Context, req *pb.ListCollectionIdsRequest) (*pb.ListCollectionIdsResponse, error) {
	return unary(ctx, req, g.s.opts.Engine.ListCollectionIds)
}

// BatchWrite implements pb.FirestoreServer.
func (g *GRPC) BatchWrite(ctx context.Context, req *pb.BatchWriteRequest) (*pb.BatchWriteResponse, error) {
	return unary(ctx, req, g.s.opts.Engine.BatchWrite)
}

// Write implements the bidirectional write stream the JS SDK uses for
// every write (wire-protocols.md §1.4): the first request names the
// database and gets a stream id and token with no results; then each
// request's writes are committed atomically and answered, in order, with
// the next stream token, the write results and the commit time. A request
// without writes only acknowledges tokens and gets no answer. A failed
// commit ends the stream with the error, which the SDK reports for that
// batch before reopening the stream.
func (g *GRPC) Write(stream pb.Firestore_WriteServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	who, err := call(ctx)
	if err != nil {
		return err
	}
	if g.draining() {
		return errDraining
	}
	reqs, errc := recvLoop(ctx, stream.Recv)
	ws := g.s.opts.Engine.WriteStream(who, "")
	for {
		var req *pb.WriteRequest
		select {
		case req = <-reqs:
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-g.drain:
			return errDraining
		}
		var r *pb.WriteResponse
		if err := admitStreamed(ctx, req, func() (err error) {
			if r, err = ws.Handle(ctx, req); err != nil {
				return Err(err)
			}
			return nil
		}); err != nil {
			return err
		}
		if r == nil {
			continue
		}
		if err := stream.Send(r); err != nil {
			return err
		}
	}
}

// Listen implements the bidirectional listen stream: any number of targets
// with client-chosen ids, added and removed at any time; the engine's
// ListenStream produces the responses in the order the SDKs expect
// (wire-protocols.md §1.3).
func (g *GRPC) Listen(stream pb.Firestore_ListenServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	who, err := call(ctx)
	if err != nil {
		return err
	}
	if g.draining() {
		return errDraining
	}
	first, err := stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	db := first.GetDatabase()
	ls, err := g.s.opts.Engine.Listen(who, db)
	if err != nil {
		return Err(err)
	}
	defer ls.Close()
	if err := ls.Handle(first); err != nil {
		return Err(err)
	}
	// The receiving side runs on its own goroutine and records why it
	// stopped; the sending side below ends when it does.
	var (
		mu      sync.Mutex
		stopErr error
	)
	stop := func(err error) {
		mu.Lock()
		if stopErr == nil {
			stopErr = err
		}
		mu.Unlock()
		cancel()
	}
	go func() {
		defer func() {
			if v := recover(); v != nil {
				stop(recovered("/google.firestore.v1.Firestore/Listen", v))
			}
		}()
		for {
			req, err := stream.Recv()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				stop(err)
				return
			}
			if d := req.GetDatabase(); d != "" && d != db {
				stop(status.Errorf(codes.InvalidArgument, "The listen stream is for %s; a request names %s.", db, d))
				return
			}
			if err := ls.Handle(req); err != nil {
				stop(Err(err))
				return
			}
		}
	}()
	go func() {
		select {
		case <-g.drain:
			stop(errDraining)
		case <-ctx.Done():
		}
	}()
	for {
		r, err := ls.Recv(ctx)
		if err != nil {
			mu.Lock()
			e := stopErr
			mu.Unlock()
			if e != nil || ctx.Err() != nil {
				return e
			}
			return Err(err)
		}
		if err := stream.Send(r); err != nil {
			return err
		}
	}
}

// recvLoop reads a client stream on its own goroutine, so that a handler
// can also wait for a drain.
func recvLoop[T any](ctx context.Context, recv func() (*T, error)) (<-chan *T, <-chan error) {
	reqs := make(chan *T)
	errc := make(chan error, 1)
	go func() {
		for {
			r, err := recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case reqs <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return reqs, errc
}
