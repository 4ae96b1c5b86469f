package firestore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// recordEncoder writes documents as MarshalFields does, byte for byte,
// into one buffer it reuses from document to document, and straight from
// a document's stored encoding when the store keeps one: a capture's
// rewrite encodes every document once, and decoding each into a
// *pb.Document only to encode it again, in a fresh buffer, was most of the
// rewrite's garbage (and so of the capture's memory at its peak).
//
// The encoding is read the way proto.Unmarshal reads it, for the encodings
// the engine writes; anything else (a field appearing twice where
// proto.Unmarshal would merge it, a map key twice, a value type
// MarshalFields writes specially or not at all, invalid UTF-8, a malformed
// encoding) makes it decode the document and encode that, so the result is
// always MarshalFields' (FuzzRecordEncoder compares them).
type recordEncoder struct {
	buf []byte
	// maps holds the entries of the map being written at each depth.
	maps [][]rawEntry
}

// rawEntry is one field of a map in a stored encoding: its name and its
// Value's encoding (nil: absent, which decodes as an empty Value).
type rawEntry struct {
	key, value []byte
}

// maxRawDepth bounds the nesting the encoder follows itself (Firestore
// allows 20 levels of maps and arrays); deeper documents take the decoding
// path, and its limits.
const maxRawDepth = 64

// Field numbers of the Firestore protos the encoder reads.
const (
	pbDocName       = 1
	pbDocFields     = 2
	pbDocCreateTime = 3
	pbDocUpdateTime = 4

	entryKey   = 1
	entryValue = 2

	valBoolean   = 1
	valInteger   = 2
	valDouble    = 3
	valReference = 5
	valMap       = 6
	valGeoPoint  = 8
	valArray     = 9
	valTimestamp = 10
	valNull      = 11
	valString    = 17
	valBytes     = 18
	// Value's oneof has more cases from here on, which MarshalFields
	// writes as null and documents never hold: the encoder leaves them to
	// the decoding path.
	valFirstOther = 19
	valLastOther  = 22
)

// fields returns MarshalFields(fields, db) in the encoder's buffer, valid
// until its next use.
func (e *recordEncoder) fields(fields map[string]*pb.Value, db DatabaseName) []byte {
	e.buf = appendFieldsJSON(e.buf[:0], fields, db)
	return e.buf
}

// document returns MarshalFields of the fields of the document whose
// stored encoding (without its name) is raw, in the encoder's buffer,
// valid until its next use. A stored encoding proto.Unmarshal rejects
// stands for a document without fields, as the store decodes it.
func (e *recordEncoder) document(raw []byte, db DatabaseName) []byte {
	if b, ok := e.appendDocument(e.buf[:0], raw, db); ok {
		e.buf = b
		return b
	}
	d := &pb.Document{}
	if err := proto.Unmarshal(raw, d); err != nil {
		d.Fields = nil
	}
	return e.fields(d.Fields, db)
}

func (e *recordEncoder) appendDocument(b, raw []byte, db DatabaseName) ([]byte, bool) {
	ents := e.entries(0)
	for len(raw) > 0 {
		num, typ, n := consumeTag(raw)
		if n < 0 {
			return b, false
		}
		raw = raw[n:]
		if num < pbDocName || num > pbDocUpdateTime {
			if n = protowire.ConsumeFieldValue(num, typ, raw); n < 0 {
				return b, false
			}
			raw = raw[n:]
			continue
		}
		if typ != protowire.BytesType {
			return b, false
		}
		v, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return b, false
		}
		raw = raw[n:]
		switch num {
		case pbDocName:
			if !utf8.Valid(v) {
				return b, false
			}
		case pbDocFields:
			ent, ok := mapEntry(v)
			if !ok {
				return b, false
			}
			ents = append(ents, ent)
		default: // a create or update time
			if _, _, ok := timestamp(v); !ok {
				return b, false
			}
		}
	}
	e.maps[0] = ents
	return e.appendFields(b, ents, 0, db)
}

// entries returns the map entries' scratch list of depth, emptied.
func (e *recordEncoder) entries(depth int) []rawEntry {
	for len(e.maps) <= depth {
		e.maps = append(e.maps, nil)
	}
	return e.maps[depth][:0]
}

// appendFields writes a map's entries as appendFieldsJSON writes its
// fields: sorted by name.
func (e *recordEncoder) appendFields(b []byte, ents []rawEntry, depth int, db DatabaseName) ([]byte, bool) {
	slices.SortFunc(ents, func(x, y rawEntry) int { return bytes.Compare(x.key, y.key) })
	b = append(b, '{')
	for i, ent := range ents {
		if i > 0 {
			if bytes.Equal(ents[i-1].key, ent.key) {
				return b, false // the decoded map keeps the last
			}
			b = append(b, ',')
		}
		b = append(appendJSONBytes(b, ent.key), ':')
		var ok bool
		if b, ok = e.appendValue(b, ent.value, depth+1, db); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// mapEntry reads a map entry's encoding.
func mapEntry(raw []byte) (rawEntry, bool) {
	var ent rawEntry
	seenValue := false
	for len(raw) > 0 {
		num, typ, n := consumeTag(raw)
		if n < 0 {
			return ent, false
		}
		raw = raw[n:]
		if num != entryKey && num != entryValue {
			if n = protowire.ConsumeFieldValue(num, typ, raw); n < 0 {
				return ent, false
			}
			raw = raw[n:]
			continue
		}
		if typ != protowire.BytesType {
			return ent, false
		}
		v, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return ent, false
		}
		raw = raw[n:]
		if num == entryKey {
			if !utf8.Valid(v) {
				return ent, false
			}
			ent.key = v
			continue
		}
		if seenValue {
			return ent, false // proto.Unmarshal merges the two
		}
		seenValue, ent.value = true, v
	}
	return ent, true
}

// appendValue writes a Value's encoding as appendValueJSON writes it.
func (e *recordEncoder) appendValue(b, raw []byte, depth int, db DatabaseName) ([]byte, bool) {
	if depth > maxRawDepth {
		return b, false
	}
	var (
		kind   protowire.Number
		kinds  int
		scalar uint64
		body   []byte
	)
	for len(raw) > 0 {
		num, typ, n := consumeTag(raw)
		if n < 0 {
			return b, false
		}
		raw = raw[n:]
		var want protowire.Type
		switch {
		case num == valBoolean || num == valInteger || num == valNull:
			want = protowire.VarintType
		case num == valDouble:
			want = protowire.Fixed64Type
		case num == valReference || num == valMap || num == valGeoPoint || num == valArray ||
			num == valTimestamp || num == valString || num == valBytes:
			want = protowire.BytesType
		case num >= valFirstOther && num <= valLastOther:
			return b, false
		default:
			if n = protowire.ConsumeFieldValue(num, typ, raw); n < 0 {
				return b, false
			}
			raw = raw[n:]
			continue
		}
		if typ != want {
			return b, false
		}
		switch want {
		case protowire.VarintType:
			scalar, n = protowire.ConsumeVarint(raw)
		case protowire.Fixed64Type:
			scalar, n = protowire.ConsumeFixed64(raw)
		default:
			body, n = protowire.ConsumeBytes(raw)
		}
		if n < 0 {
			return b, false
		}
		raw = raw[n:]
		kind, kinds = num, kinds+1
	}
	if kinds > 1 {
		return b, false // the last wins, or two messages merge
	}
	switch kind {
	case 0, valNull:
		return append(b, "null"...), true
	case valBoolean:
		return strconv.AppendBool(b, protowire.DecodeBool(scalar)), true
	case valInteger:
		return strconv.AppendInt(b, int64(scalar), 10), true
	case valDouble:
		return appendDoubleJSON(b, math.Float64frombits(scalar)), true
	case valTimestamp:
		sec, nanos, ok := timestamp(body)
		if !ok {
			return b, false
		}
		b = append(b, `{"__type":"timestamp","nanos":`...)
		b = strconv.AppendInt(b, int64(nanos), 10)
		b = append(b, `,"seconds":`...)
		return append(strconv.AppendInt(b, sec, 10), '}'), true
	case valString:
		if !utf8.Valid(body) {
			return b, false
		}
		return appendJSONBytes(b, body), true
	case valBytes:
		b = append(b, `{"__type":"bytes","base64":"`...)
		return append(base64.StdEncoding.AppendEncode(b, body), `"}`...), true
	case valReference:
		if !utf8.Valid(body) {
			return b, false
		}
		p := string(body)
		if dn, rel, err := ParseDocumentName(p); err == nil && dn == db {
			p = rel
		}
		b = append(b, `{"__type":"reference","path":`...)
		return append(appendJSONString(b, p), '}'), true
	case valGeoPoint:
		lat, lng, ok := latLng(body)
		if !ok {
			return b, false
		}
		latJSON, _ := json.Marshal(lat)
		lngJSON, _ := json.Marshal(lng)
		b = append(append(b, `{"__type":"latlng","lat":`...), latJSON...)
		return append(append(append(b, `,"lng":`...), lngJSON...), '}'), true
	case valArray:
		return e.appendArray(b, body, depth, db)
	case valMap:
		return e.appendMap(b, body, depth, db)
	}
	return b, false
}

// appendArray writes an ArrayValue's encoding.
func (e *recordEncoder) appendArray(b, raw []byte, depth int, db DatabaseName) ([]byte, bool) {
	b = append(b, '[')
	first := true
	for len(raw) > 0 {
		v, rest, found, ok := nextRepeated(raw)
		if !ok {
			return b, false
		}
		raw = rest
		if !found {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		if b, ok = e.appendValue(b, v, depth+1, db); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// appendMap writes a MapValue's encoding. A map with a "__type__" field
// (a vector, or a map MarshalFields marks as one) is left to the decoding
// path; one with a "__type" field is marked as a map, as appendValueJSON
// marks it.
func (e *recordEncoder) appendMap(b, raw []byte, depth int, db DatabaseName) ([]byte, bool) {
	ents := e.entries(depth)
	marked := false
	for len(raw) > 0 {
		v, rest, found, ok := nextRepeated(raw)
		if !ok {
			return b, false
		}
		raw = rest
		if !found {
			continue
		}
		ent, ok := mapEntry(v)
		if !ok {
			return b, false
		}
		switch string(ent.key) {
		case "__type__":
			return b, false
		case "__type":
			marked = true
		}
		ents = append(ents, ent)
	}
	e.maps[depth] = ents
	if !marked {
		return e.appendFields(b, ents, depth, db)
	}
	b = append(b, `{"__type":"map","value":`...)
	b, ok := e.appendFields(b, ents, depth, db)
	return append(b, '}'), ok
}

// timestamp reads a Timestamp's encoding.
func timestamp(raw []byte) (sec int64, nanos int32, ok bool) {
	s, n, ok := fieldPair(raw, protowire.VarintType)
	return int64(s), int32(n), ok
}

// latLng reads a LatLng's encoding.
func latLng(raw []byte) (lat, lng float64, ok bool) {
	a, b, ok := fieldPair(raw, protowire.Fixed64Type)
	return math.Float64frombits(a), math.Float64frombits(b), ok
}

// fieldPair reads a message whose fields 1 and 2 are scalars of wire type
// typ (varint or fixed64), the last of each repeated one counting, as
// proto.Unmarshal reads it: other fields are skipped, a field 1 or 2 of
// another type or a malformed encoding is not ok.
func fieldPair(raw []byte, typ protowire.Type) (first, second uint64, ok bool) {
	for len(raw) > 0 {
		num, t, n := consumeTag(raw)
		if n < 0 {
			return 0, 0, false
		}
		raw = raw[n:]
		if num != 1 && num != 2 {
			if n = protowire.ConsumeFieldValue(num, t, raw); n < 0 {
				return 0, 0, false
			}
			raw = raw[n:]
			continue
		}
		if t != typ {
			return 0, 0, false
		}
		var v uint64
		if typ == protowire.VarintType {
			v, n = protowire.ConsumeVarint(raw)
		} else {
			v, n = protowire.ConsumeFixed64(raw)
		}
		if n < 0 {
			return 0, 0, false
		}
		raw = raw[n:]
		if num == 1 {
			first = v
		} else {
			second = v
		}
	}
	return first, second, true
}

// appendDoubleJSON writes a double as appendValueJSON does.
func appendDoubleJSON(b []byte, f float64) []byte {
	marker := func(val string) []byte {
		return append(append(append(b, `{"__type":"float","value":`...), val...), '}')
	}
	switch {
	case math.IsNaN(f):
		return marker(`"NaN"`)
	case math.IsInf(f, 1):
		return marker(`"Infinity"`)
	case math.IsInf(f, -1):
		return marker(`"-Infinity"`)
	case f == math.Trunc(f):
		if f == 0 && math.Signbit(f) {
			return marker(`"-0"`)
		}
		return marker(strconv.FormatFloat(f, 'f', -1, 64))
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendJSONBytes is appendJSONString of s's bytes, without making a
// string of them when they need no escaping.
func appendJSONBytes(b, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			return appendJSONString(b, string(s))
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// scanEncoded is Document for a reader of every document once (a
// capture's EachRecord), giving the document's stored encoding when
// the store keeps one (fsstore.Store.ScanEncodedAt): both nil when absent.
func (e *Engine) scanEncoded(name DatabaseName, rel string) (*pb.Document, []byte) {
	db := e.existing(name)
	if db == nil {
		return nil, nil
	}
	db.st.RLock()
	defer db.st.RUnlock()
	return db.st.ScanEncodedAt(rel, db.st.ReadTime())
}

// consumeTag is protowire.ConsumeTag refusing, as proto.Unmarshal does, a
// field number out of range.
// nextRepeated reads the first field of raw, an ArrayValue's or a
// MapValue's encoding: found, with its bytes v, when it is their repeated
// field 1 (a value, an entry); not found when it is another field,
// skipped. rest is what follows; ok is false when raw is malformed or
// field 1 is not length-delimited.
func nextRepeated(raw []byte) (v, rest []byte, found, ok bool) {
	num, typ, n := consumeTag(raw)
	if n < 0 {
		return nil, nil, false, false
	}
	raw = raw[n:]
	if num != 1 {
		if n = protowire.ConsumeFieldValue(num, typ, raw); n < 0 {
			return nil, nil, false, false
		}
		return nil, raw[n:], false, true
	}
	if typ != protowire.BytesType {
		return nil, nil, false, false
	}
	if v, n = protowire.ConsumeBytes(raw); n < 0 {
		return nil, nil, false, false
	}
	return v, raw[n:], true, true
}

func consumeTag(raw []byte) (protowire.Number, protowire.Type, int) {
	num, typ, n := protowire.ConsumeTag(raw)
	if n >= 0 && !num.IsValid() {
		return 0, 0, -1
	}
	return num, typ, n
}
