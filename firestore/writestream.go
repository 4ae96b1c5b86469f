package firestore

import (
	"context"
	"strconv"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
)

// WriteStream is the protocol of one Write stream (wire-protocols.md §1.4),
// the way ListenStream is Listen's: the transports (gRPC, WebChannel) feed
// it requests in order and send what it answers. The first request names
// the database and carries no writes; it is answered with a stream id and
// a token. Each later request with writes is committed atomically and
// answered with the next token, the write results and the commit time; one
// without writes only acknowledges and gets no answer. A request's
// stream_token, when set, must be one this stream issued.
type WriteStream struct {
	e       *Engine
	who     identity.Identity
	def     string // the database used when the first request names none
	db      string
	started bool
	issued  int // tokens issued so far: "0" .. issued-1
}

// WriteStream starts a Write stream for who; defaultDB is the database a
// first request that names none is for (the transport's routing).
func (e *Engine) WriteStream(who identity.Identity, defaultDB string) *WriteStream {
	return &WriteStream{e: e, who: who, def: defaultDB}
}

// Handle processes one request and returns the response to send, or nil
// when the request gets none. An error ends the stream with that status.
func (s *WriteStream) Handle(ctx context.Context, req *pb.WriteRequest) (*pb.WriteResponse, error) {
	if !s.started {
		db := req.GetDatabase()
		if db == "" {
			db = s.def
		}
		if _, err := ParseDatabaseName(db); err != nil {
			return nil, err
		}
		if len(req.GetWrites()) > 0 {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "The first request of a write stream must not carry writes: it opens the stream (database only) and is answered with a stream_token; send the %d writes in a later request.", len(req.GetWrites()))
		}
		if len(req.GetStreamToken()) > 0 || req.GetStreamId() != "" {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Invalid stream_token: this server cannot resume a write stream; open a new one without stream_id and stream_token.")
		}
		s.started, s.db = true, db
		id := strconv.FormatUint(s.e.seq.Add(1), 10)
		return &pb.WriteResponse{StreamId: id, StreamToken: s.token()}, nil
	}
	if d := req.GetDatabase(); d != "" && d != s.db {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "The write stream is for %s; a request names %s.", s.db, d)
	}
	if tok := req.GetStreamToken(); len(tok) > 0 {
		n, err := strconv.Atoi(string(tok))
		if err != nil || n < 0 || n >= s.issued || strconv.Itoa(n) != string(tok) {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Invalid stream_token %q: it was not issued on this write stream.", fsvalue.Truncate(string(tok), 40))
		}
	}
	if len(req.GetWrites()) == 0 {
		return nil, nil
	}
	r, err := s.e.Commit(ctx, s.who, &pb.CommitRequest{Database: s.db, Writes: req.GetWrites()})
	if err != nil {
		return nil, err
	}
	return &pb.WriteResponse{StreamToken: s.token(), WriteResults: r.GetWriteResults(), CommitTime: r.GetCommitTime()}, nil
}

func (s *WriteStream) token() []byte {
	b := []byte(strconv.Itoa(s.issued))
	s.issued++
	return b
}
