package firestoreserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/errcode"
)

// The JSON codec of the REST and WebChannel adapters: proto3 JSON as the
// official HTTP mapping defines it (lowerCamelCase names, enums as names,
// 64-bit integers and bytes as strings, RFC 3339 timestamps), errors in
// Google's envelope.

var (
	jsonIn  = protojson.UnmarshalOptions{}
	jsonOut = protojson.MarshalOptions{}
)

func marshalJSON(m proto.Message) ([]byte, error) { return jsonOut.Marshal(m) }

// unmarshalJSON decodes proto3 JSON into m; an empty body is an empty
// message. The error names the problem (unknown field, bad value) and
// where it is.
func unmarshalJSON(data []byte, m proto.Message) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	data, verifies, err := extractVerifies(data, m)
	if err != nil {
		return err
	}
	if err := jsonIn.Unmarshal(data, m); err != nil {
		if path, problem, ok := badJSONString(data); ok {
			return status.Errorf(codes.InvalidArgument, "Invalid JSON payload received for %s: the string at %s is not valid UTF-8: %s.", m.ProtoReflect().Descriptor().Name(), path, problem)
		}
		return status.Errorf(codes.InvalidArgument, "Invalid JSON payload received for %s: %s.", m.ProtoReflect().Descriptor().Name(), protoErrText(err))
	}
	return attachVerifies(m, verifies)
}

// verifyField is the number of Write.verify, the operation the JS SDKs'
// transactions use for documents they read but do not write
// ({"verify": name, "currentDocument": {...}}). The published
// google.firestore.v1 protos (and so firestorepb) lack it; over gRPC it
// arrives as an unknown field 5 of the Write, and the REST decoder puts it
// in the same place, so the engine sees one representation.
const verifyField = 5

// writeLists are the messages whose "writes" may carry verify operations.
var writeLists = map[protoreflect.FullName]bool{
	"google.firestore.v1.CommitRequest":     true,
	"google.firestore.v1.BatchWriteRequest": true,
	"google.firestore.v1.WriteRequest":      true,
}

// extractVerifies removes the "verify" members from the writes of a
// commit-like request body, returning the body protojson accepts and the
// verified names by write index.
func extractVerifies(data []byte, m proto.Message) ([]byte, map[int]string, error) {
	if !writeLists[m.ProtoReflect().Descriptor().FullName()] || !bytes.Contains(data, []byte(`"verify"`)) {
		return data, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil {
		return data, nil, nil // protojson reports the syntax error precisely
	}
	writes, _ := body["writes"].([]any)
	verifies := map[int]string{}
	for i, w := range writes {
		obj, ok := w.(map[string]any)
		if !ok {
			continue
		}
		v, ok := obj["verify"]
		if !ok {
			continue
		}
		name, ok := v.(string)
		if !ok {
			return nil, nil, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received for %s: writes[%d].verify must be a document name string.", m.ProtoReflect().Descriptor().Name(), i)
		}
		for _, op := range []string{"update", "delete", "transform"} {
			if _, both := obj[op]; both {
				return nil, nil, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received for %s: writes[%d] has both verify and %s; a write has one operation.", m.ProtoReflect().Descriptor().Name(), i, op)
			}
		}
		delete(obj, "verify")
		verifies[i] = name
	}
	if len(verifies) == 0 {
		return data, nil, nil
	}
	out, err := json.Marshal(body)
	if err != nil {
		return nil, nil, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received for %s: %v.", m.ProtoReflect().Descriptor().Name(), err)
	}
	return out, verifies, nil
}

// attachVerifies stores each verified name as the Write's unknown field 5,
// exactly as a binary (gRPC) decode of the SDK's message leaves it.
func attachVerifies(m proto.Message, verifies map[int]string) error {
	if len(verifies) == 0 {
		return nil
	}
	md := m.ProtoReflect()
	list := md.Get(md.Descriptor().Fields().ByName("writes")).List()
	for i, name := range verifies {
		if i >= list.Len() {
			continue
		}
		w := list.Get(i).Message()
		raw := protowire.AppendTag(nil, verifyField, protowire.BytesType)
		raw = protowire.AppendString(raw, name)
		w.SetUnknown(append(w.GetUnknown(), raw...))
	}
	return nil
}

// protoErrText drops protobuf-go's "proto:" prefix (followed by a space or
// a no-break space) from an error message.
func protoErrText(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, "proto:"); ok {
		s = strings.TrimLeftFunc(rest, unicode.IsSpace)
	}
	return strings.TrimSuffix(s, ".")
}

// readBody reads a request body of at most maxBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "Reading the request body: %v.", err)
	}
	if len(data) > maxBodyBytes {
		return nil, status.Errorf(codes.InvalidArgument, "Request payload size exceeds the limit: %d bytes.", maxBodyBytes)
	}
	return data, nil
}

// decodeBody reads the JSON body into m, answering the error itself when
// it fails. Any Content-Type is read as JSON: the SDKs send text/plain, and
// the official emulator rewrites empty and text/plain types to JSON.
func decodeBody(w http.ResponseWriter, r *http.Request, m proto.Message) bool {
	data, err := readBody(r)
	if err == nil {
		err = unmarshalJSON(data, m)
	}
	if err != nil {
		writeError(w, err)
		return false
	}
	return true
}

// decodeQuery sets fields of m from URL query parameters, answering the
// error itself when one is malformed.
func decodeQuery(w http.ResponseWriter, q url.Values, m proto.Message) bool {
	if err := setQuery(m, q); err != nil {
		writeError(w, err)
		return false
	}
	return true
}

// systemParams are Google's standard query parameters, accepted on every
// API and meaningless here (key is the API key the SDKs append).
var systemParams = map[string]bool{
	"key": true, "alt": true, "$alt": true, "prettyPrint": true, "fields": true, "$fields": true,
	"access_token": true, "callback": true, "quotaUser": true, "upload_protocol": true,
	"uploadType": true, "$.xgafv": true, "oauth_token": true, "userIp": true,
}

// setQuery binds query parameters to fields of m the way Google's HTTP
// mapping does: a dotted path of field names (lowerCamelCase or
// snake_case) names a scalar, repeated values append, timestamps are RFC
// 3339 and bytes base64. Fields bound by the URL path may not be given.
func setQuery(m proto.Message, q url.Values) error {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if systemParams[k] {
			continue
		}
		if err := setParam(m.ProtoReflect(), k, q[k]); err != nil {
			return err
		}
	}
	return nil
}

func setParam(root protoreflect.Message, key string, vals []string) error {
	name := root.Descriptor().Name()
	parts := strings.Split(key, ".")
	msg := root
	for i, part := range parts {
		fd := findField(msg.Descriptor(), part)
		if fd == nil || isPathBound(root.Descriptor().FullName(), fd) && i == 0 {
			return status.Errorf(codes.InvalidArgument, "Unknown query parameter %q for %s.", key, name)
		}
		if i < len(parts)-1 {
			if fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() || isTimestamp(fd) {
				return status.Errorf(codes.InvalidArgument, "Query parameter %q of %s: %q is not a message field.", key, name, part)
			}
			msg = msg.Mutable(fd).Message()
			continue
		}
		if fd.IsMap() || (fd.Kind() == protoreflect.MessageKind && !isTimestamp(fd)) {
			return status.Errorf(codes.InvalidArgument, "Query parameter %q of %s names a message; name one of its fields (for example %s.%s).", key, name, key, firstField(fd))
		}
		if !fd.IsList() && len(vals) > 1 {
			return status.Errorf(codes.InvalidArgument, "Query parameter %q of %s is given %d times; it takes one value.", key, name, len(vals))
		}
		for _, s := range vals {
			v, err := parseScalar(fd, s)
			if err != nil {
				return status.Errorf(codes.InvalidArgument, "Invalid value %q for query parameter %q of %s: %v.", s, key, name, err)
			}
			if fd.IsList() {
				msg.Mutable(fd).List().Append(v)
			} else {
				msg.Set(fd, v)
			}
		}
	}
	return nil
}

// isPathBound reports whether a top-level field is taken from the URL path.
func isPathBound(msg protoreflect.FullName, fd protoreflect.FieldDescriptor) bool {
	switch fd.Name() {
	case "name", "parent", "collection_id", "database":
		return true
	case "document":
		return strings.HasSuffix(string(msg), "UpdateDocumentRequest") || strings.HasSuffix(string(msg), "CreateDocumentRequest")
	}
	return false
}

func findField(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fields := md.Fields()
	if fd := fields.ByJSONName(name); fd != nil {
		return fd
	}
	return fields.ByName(protoreflect.Name(name))
}

func firstField(fd protoreflect.FieldDescriptor) string {
	if f := fd.Message().Fields(); f.Len() > 0 {
		return f.Get(0).JSONName()
	}
	return "field"
}

func isTimestamp(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() == "google.protobuf.Timestamp"
}

func parseScalar(fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return protoreflect.Value{}, errors.New("want true or false")
		}
		return protoreflect.ValueOfBool(b), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return protoreflect.Value{}, errors.New("want a 32-bit integer")
		}
		return protoreflect.ValueOfInt32(int32(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return protoreflect.Value{}, errors.New("want a 64-bit integer")
		}
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return protoreflect.Value{}, errors.New("want an unsigned 32-bit integer")
		}
		return protoreflect.ValueOfUint32(uint32(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return protoreflect.Value{}, errors.New("want an unsigned 64-bit integer")
		}
		return protoreflect.ValueOfUint64(n), nil
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s), nil
	case protoreflect.BytesKind:
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil {
				return protoreflect.ValueOfBytes(b), nil
			}
		}
		return protoreflect.Value{}, errors.New("want base64")
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(s)); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), nil
		}
		if n, err := strconv.ParseInt(s, 10, 32); err == nil && fd.Enum().Values().ByNumber(protoreflect.EnumNumber(n)) != nil {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), nil
		}
		return protoreflect.Value{}, fmt.Errorf("want one of %s", enumNames(fd.Enum()))
	case protoreflect.MessageKind:
		if isTimestamp(fd) {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return protoreflect.Value{}, errors.New("want an RFC 3339 timestamp such as 2024-01-02T03:04:05.123456Z")
			}
			return protoreflect.ValueOfMessage(timestamppb.New(t).ProtoReflect()), nil
		}
	}
	return protoreflect.Value{}, fmt.Errorf("unsupported field type %s", fd.Kind())
}

func enumNames(ed protoreflect.EnumDescriptor) string {
	var names []string
	for i := 0; i < ed.Values().Len(); i++ {
		names = append(names, string(ed.Values().Get(i).Name()))
	}
	return strings.Join(names, ", ")
}

// writeError answers err in Google's JSON envelope with the HTTP status of
// its code; engine errors go through Status, the one mapping.
func writeError(w http.ResponseWriter, err error) {
	st := Status(err)
	api.Fail(w, errcode.FromGRPC(st.Code()), st.Message())
}

// asciiJSON escapes every non-ASCII character of a JSON text as \uXXXX
// (surrogate pairs beyond the BMP). Non-ASCII can only occur inside JSON
// strings, so the result is the same JSON value; WebChannel frames count
// their length in UTF-16 code units, which for ASCII is the byte count.
func asciiJSON(b []byte) []byte {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r < utf8.RuneSelf:
			out = append(out, b[0])
		case r > 0xFFFF:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		b = b[n:]
	}
	return out
}
