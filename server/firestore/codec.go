package firestoreserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/server"
)

// grpc-go turns a request its codec cannot decode into INTERNAL, before any
// interceptor runs. A malformed message is the client's mistake, so the
// port's codec never fails a decode: it records the problem for the
// message, and the interceptors below answer INVALID_ARGUMENT naming it
// (which field is not UTF-8, or what is wrong with the bytes) before the
// handler sees the half-decoded request.

// decodeErrors maps a request message to what was wrong with its bytes.
var decodeErrors sync.Map // proto.Message -> string

// lenientCodec is the proto codec with decode errors deferred to the
// interceptors.
type lenientCodec struct{}

func (lenientCodec) Name() string { return "proto" }

func (lenientCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("codec: %T is not a proto message", v)
	}
	return proto.Marshal(m)
}

func (lenientCodec) Unmarshal(b []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("codec: %T is not a proto message", v)
	}
	if len(b) > server.HeavyBodyBytes {
		deferred.Store(m, slices.Clone(b)) // b is the transport's buffer, reused once we return
		return nil
	}
	decode(b, m)
	return nil
}

func decode(b []byte, m proto.Message) {
	if err := proto.Unmarshal(b, m); err != nil {
		proto.Reset(m)
		decodeErrors.Store(m, describeDecodeError(m.ProtoReflect().Descriptor(), b, err))
	}
}

// A request message past server.HeavyBodyBytes is heavy work: decoding
// it, checking it against the rules and committing it cost what a heavy
// HTTP body does, so it waits at the process's gate as those do. The
// codec keeps its bytes (deferred) instead of decoding them; a unary call
// is admitted, then decoded and served (admitUnary); a stream's message
// is decoded as it is received (the stream's receiving goroutine is not
// the one that does its work) and its work admitted where it is done
// (Write).

// deferred maps a heavy request message to its undecoded bytes.
var deferred sync.Map // proto.Message -> []byte

// decodeDeferred decodes req's deferred bytes, if any, and returns their
// size (0 when req was decoded by the codec).
func decodeDeferred(req any) int {
	m, ok := req.(proto.Message)
	if !ok {
		return 0
	}
	b, ok := deferred.LoadAndDelete(m)
	if !ok {
		return 0
	}
	decode(b.([]byte), m)
	return len(b.([]byte))
}

// admitUnary serves a heavy unary request as admitted heavy work: on a
// goroutine of its own, once the gate admits it, decoded there.
func admitUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	m, ok := req.(proto.Message)
	if !ok {
		return h(ctx, req)
	}
	b, ok := deferred.Load(m)
	if !ok {
		// The codec decoded it: it came in at most HeavyBodyBytes.
		return h(firestore.WithDecodedRequest(ctx, server.HeavyBodyBytes), req)
	}
	server.OwnGoroutine(func() {
		release, aerr := server.AdmitMessage(ctx, int64(len(b.([]byte))))
		if aerr != nil {
			deferred.Delete(m)
			err = status.FromContextError(aerr).Err()
			return
		}
		defer release()
		hctx := ctx
		if n := decodeDeferred(m); n > 0 {
			hctx = firestore.WithDecodedRequest(ctx, n)
		}
		resp, err = h(hctx, req)
	})
	return resp, err
}

// admitStreamed does the work of a message a stream received (a Write)
// as the gate admits heavy work: a message past server.HeavyBodyBytes
// waits for a slot and is worked on a goroutine of its own, since admitted
// work lowers its thread for good (server.AdmitMessage) and the stream's
// goroutine is a reused worker; a light one's work is done at once, on
// the stream's goroutine. A stream handler running on a goroutine of its
// own instead cost every stream a goroutine (its stack grown again
// through the engine) and a hand-off, a get's BatchGetDocuments
// included.
func admitStreamed(ctx context.Context, m proto.Message, work func() error) error {
	size := int64(proto.Size(m))
	if size <= server.HeavyBodyBytes {
		return work()
	}
	var err error
	server.OwnGoroutine(func() {
		release, aerr := server.AdmitMessage(ctx, size)
		if aerr != nil {
			err = status.FromContextError(aerr).Err()
			return
		}
		defer release()
		err = work()
	})
	return err
}

// takeDecodeError returns (and forgets) the decode problem of req.
func takeDecodeError(req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	msg, ok := decodeErrors.LoadAndDelete(m)
	if !ok {
		return nil
	}
	return status.Error(codes.InvalidArgument, msg.(string))
}

func decodeCheckUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := takeDecodeError(req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func decodeCheckStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, checkedStream{ss})
}

// checkedStream fails RecvMsg for a message that could not be decoded.
type checkedStream struct{ grpc.ServerStream }

func (s checkedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	decodeDeferred(m)
	return takeDecodeError(m)
}

// describeDecodeError says what is wrong with b as a message of md.
func describeDecodeError(md protoreflect.MessageDescriptor, b []byte, err error) string {
	what := "The request is not a valid " + string(md.FullName()) + " message"
	if path, ok := findBadUTF8(md, b, "", 0); ok {
		return fmt.Sprintf("%s: the string at %s is not valid UTF-8.", what, path)
	}
	e := err.Error()
	for _, p := range []string{"proto: ", "proto:\u00a0"} {
		e = strings.TrimPrefix(e, p)
	}
	return fmt.Sprintf("%s: %s.", what, e)
}

// findBadUTF8 walks the wire form of a message of md and returns the path
// of the first string field (or map key) that is not valid UTF-8.
func findBadUTF8(md protoreflect.MessageDescriptor, b []byte, path string, depth int) (string, bool) {
	if depth > 200 {
		return "", false
	}
	counts := map[protowire.Number]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return "", false
			}
			b = b[m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return "", false
		}
		b = b[m:]
		fd := md.Fields().ByNumber(num)
		if fd == nil {
			continue
		}
		name := string(fd.Name())
		if path != "" {
			name = path + "." + name
		}
		if fd.IsList() {
			name += "[" + strconv.Itoa(counts[num]) + "]"
			counts[num]++
		}
		switch {
		case fd.IsMap():
			key, val, ok := mapEntry(v)
			if !ok {
				continue
			}
			if fd.MapKey().Kind() == protoreflect.StringKind && !utf8.Valid(key) {
				return name + " (a map key)", true
			}
			entry := name + "[" + strconv.Quote(string(key)) + "]"
			switch fd.MapValue().Kind() {
			case protoreflect.StringKind:
				if !utf8.Valid(val) {
					return entry, true
				}
			case protoreflect.MessageKind:
				if p, ok := findBadUTF8(fd.MapValue().Message(), val, entry, depth+1); ok {
					return p, true
				}
			}
		case fd.Kind() == protoreflect.StringKind:
			if !utf8.Valid(v) {
				return name, true
			}
		case fd.Kind() == protoreflect.MessageKind:
			if p, ok := findBadUTF8(fd.Message(), v, name, depth+1); ok {
				return p, true
			}
		}
	}
	return "", false
}

// mapEntry splits an encoded map entry into its key and value bytes.
func mapEntry(b []byte) (key, val []byte, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return nil, nil, false
			}
			b = b[m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return nil, nil, false
		}
		b = b[m:]
		switch num {
		case 1:
			key = v
		case 2:
			val = v
		}
	}
	return key, val, true
}
