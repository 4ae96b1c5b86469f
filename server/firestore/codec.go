package firestoreserver

import (
	"context"
	"fmt"
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
	if err := proto.Unmarshal(b, m); err != nil {
		proto.Reset(m)
		decodeErrors.Store(m, describeDecodeError(m.ProtoReflect().Descriptor(), b, err))
	}
	return nil
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
