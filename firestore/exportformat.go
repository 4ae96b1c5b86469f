package firestore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/sandbox/service"
)

// The official Firestore emulator's export (firestore_export/) is the
// Datastore export format: LevelDB log files (all_namespaces/all_kinds/
// output-N) whose records are EntityProto messages (the onestore v3
// schema): the key's path of (kind, name) elements, and one property per
// field, or one per element for an array (multiple=true), with a meaning
// that types the value (7 timestamp in microseconds, 9 geo point, 14
// bytes, 19 an embedded entity = a map).

const (
	logBlock     = 32768
	logHeader    = 7
	recFull      = 1
	recFirst     = 2
	recMiddle    = 3
	recLast      = 4
	meaningWhen  = 7
	meaningPoint = 9
	meaningBlob  = 14
	meaningBytes = 16
	meaningMap   = 19
	meaningEmpty = 24 // an empty array (EMPTY_LIST)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func maskedCRC(typ byte, data []byte) uint32 {
	c := crc32.Update(crc32.Checksum([]byte{typ}, castagnoli), castagnoli, data)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// readLog returns the records of a LevelDB log file.
func readLog(data []byte) ([][]byte, error) {
	var out [][]byte
	var pending []byte
	inFrag := false
	for off := 0; off < len(data); {
		left := logBlock - off%logBlock
		if left < logHeader {
			off += left // block trailer
			continue
		}
		if off+logHeader > len(data) {
			break
		}
		h := data[off : off+logHeader]
		n := int(binary.LittleEndian.Uint16(h[4:6]))
		typ := h[6]
		if typ == 0 && n == 0 {
			off += left // zero padding to the block's end
			continue
		}
		if off+logHeader+n > len(data) || n > left-logHeader {
			return nil, fmt.Errorf("%w: record at offset %d overruns its block", service.ErrExport, off)
		}
		payload := data[off+logHeader : off+logHeader+n]
		if binary.LittleEndian.Uint32(h[0:4]) != maskedCRC(typ, payload) {
			return nil, fmt.Errorf("%w: record at offset %d fails its checksum", service.ErrExport, off)
		}
		off += logHeader + n
		switch typ {
		case recFull:
			if inFrag {
				return nil, fmt.Errorf("%w: unterminated fragmented record before offset %d", service.ErrExport, off)
			}
			out = append(out, append([]byte(nil), payload...))
		case recFirst:
			pending, inFrag = append([]byte(nil), payload...), true
		case recMiddle, recLast:
			if !inFrag {
				return nil, fmt.Errorf("%w: record fragment without a start at offset %d", service.ErrExport, off)
			}
			pending = append(pending, payload...)
			if typ == recLast {
				out, pending, inFrag = append(out, pending), nil, false
			}
		default:
			return nil, fmt.Errorf("%w: unknown record type %d at offset %d", service.ErrExport, typ, off)
		}
	}
	return out, nil
}

// ReadExport reads a Firestore export directory (the directory
// holding all_namespaces/, or one level above it) into documents by
// relative path, as pb fields.
func ReadExport(dir string, db DatabaseName) (map[string]map[string]*pb.Value, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "all_namespaces", "all_kinds", "output-*"))
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join(dir, "*", "all_namespaces", "all_kinds", "output-*"))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s has no all_namespaces/all_kinds/output-* files", service.ErrExport, dir)
	}
	sort.Strings(files)
	docs := map[string]map[string]*pb.Value{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		recs, err := readLog(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i, r := range recs {
			path, fields, err := decodeEntity(r, db)
			if err != nil {
				return nil, fmt.Errorf("%s: record %d: %w", f, i, err)
			}
			if path == "" {
				return nil, fmt.Errorf("%s: record %d: %w: an entity without a key", f, i, service.ErrExport)
			}
			docs[path] = fields
		}
	}
	return docs, nil
}

type field struct {
	b   []byte
	num protowire.Number
	typ protowire.Type
	v   uint64
}

// fields splits a message into its fields (groups returned whole, their
// content in b).
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: bad tag", service.ErrExport)
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			f.v, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.v = uint64(v)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.StartGroupType:
			f.b, n = protowire.ConsumeGroup(num, b)
		default:
			return nil, fmt.Errorf("%w: unexpected wire type %d", service.ErrExport, typ)
		}
		if n < 0 {
			return nil, fmt.Errorf("%w: truncated field %d", service.ErrExport, num)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}

// decodeEntity returns an EntityProto's document path and fields.
func decodeEntity(b []byte, db DatabaseName) (string, map[string]*pb.Value, error) {
	fs, err := fields(b)
	if err != nil {
		return "", nil, err
	}
	var path string
	out := map[string]*pb.Value{}
	arrays := map[string]bool{}
	for _, f := range fs {
		switch f.num {
		case 13: // key: Reference
			if path, err = keyPath(f.b); err != nil {
				return "", nil, err
			}
		case 14, 15: // property, raw_property
			name, v, multiple, empty, err := decodeProperty(f.b, db)
			if err != nil {
				return "", nil, err
			}
			switch {
			case empty:
				out[name] = Array()
			case multiple:
				if !arrays[name] {
					arrays[name] = true
					out[name] = Array()
				}
				av := out[name].GetArrayValue()
				av.Values = append(av.Values, v)
			default:
				out[name] = v
			}
		}
	}
	return path, out, nil
}

// keyPath reads a Reference's path into "kind/name/kind/name".
func keyPath(b []byte) (string, error) {
	fs, err := fields(b)
	if err != nil {
		return "", err
	}
	for _, f := range fs {
		if f.num == 14 && f.typ == protowire.BytesType {
			return pathElements(f.b, 1, 2, 3, 4)
		}
	}
	return "", nil
}

// pathElements reads the repeated Element groups of a Path (group field
// elem, with kind, id and name fields).
func pathElements(b []byte, elem, kind, id, name protowire.Number) (string, error) {
	fs, err := fields(b)
	if err != nil {
		return "", err
	}
	var segs []string
	for _, f := range fs {
		if f.num != elem || f.typ != protowire.StartGroupType {
			continue
		}
		s, err := element(f.b, kind, id, name)
		if err != nil {
			return "", err
		}
		segs = append(segs, s...)
	}
	return strings.Join(segs, "/"), nil
}

func element(b []byte, kind, id, name protowire.Number) ([]string, error) {
	efs, err := fields(b)
	if err != nil {
		return nil, err
	}
	var k, n string
	for _, e := range efs {
		switch e.num {
		case kind:
			k = string(e.b)
		case name:
			n = string(e.b)
		case id:
			n = fmt.Sprint(int64(e.v))
		}
	}
	return []string{k, n}, nil
}

func decodeProperty(b []byte, db DatabaseName) (name string, v *pb.Value, multiple, empty bool, err error) {
	fs, err := fields(b)
	if err != nil {
		return "", nil, false, false, err
	}
	var meaning uint64
	var value []byte
	for _, f := range fs {
		switch f.num {
		case 1:
			meaning = f.v
		case 3:
			name = string(f.b)
		case 4:
			multiple = f.v != 0
		case 5:
			value = f.b
		}
	}
	if meaning == meaningEmpty {
		return name, nil, false, true, nil
	}
	v, err = decodeEntityValue(value, meaning, db)
	return name, v, multiple, false, err
}

func decodeEntityValue(b []byte, meaning uint64, db DatabaseName) (*pb.Value, error) {
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return Null(), nil
	}
	f := fs[0]
	switch f.num {
	case 1: // int64Value
		if meaning == meaningWhen {
			us := int64(f.v)
			return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(time.UnixMicro(us))}}, nil
		}
		return Int(int64(f.v)), nil
	case 2:
		return Bool(f.v != 0), nil
	case 3: // stringValue
		switch meaning {
		case meaningMap:
			_, m, err := decodeEntity(f.b, db)
			if err != nil {
				return nil, err
			}
			return Map(m), nil
		case meaningBlob, meaningBytes:
			return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: append([]byte(nil), f.b...)}}, nil
		}
		return String(string(f.b)), nil
	case 4:
		return Double(math.Float64frombits(f.v)), nil
	case 5: // PointValue group: x = latitude, y = longitude
		pfs, err := fields(f.b)
		if err != nil {
			return nil, err
		}
		var lat, lng float64
		for _, p := range pfs {
			switch p.num {
			case 6:
				lat = math.Float64frombits(p.v)
			case 7:
				lng = math.Float64frombits(p.v)
			}
		}
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: lat, Longitude: lng}}}, nil
	case 12: // ReferenceValue group: app 13, PathElement groups 14 (type 15, id 16, name 17)
		p, err := pathElements(f.b, 14, 15, 16, 17)
		if err != nil {
			return nil, err
		}
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: db.DocName(p)}}, nil
	}
	return nil, fmt.Errorf("%w: unsupported value field %d (meaning %d)", service.ErrExport, f.num, meaning)
}

// writeLog frames records as a LevelDB log file.
func writeLog(recs [][]byte) []byte {
	var out []byte
	for _, r := range recs {
		first := true
		for {
			left := logBlock - len(out)%logBlock
			if left < logHeader {
				out = append(out, make([]byte, left)...)
				continue
			}
			n := min(len(r), left-logHeader)
			last := n == len(r)
			typ := byte(recMiddle)
			switch {
			case first && last:
				typ = recFull
			case first:
				typ = recFirst
			case last:
				typ = recLast
			}
			var h [logHeader]byte
			binary.LittleEndian.PutUint32(h[0:4], maskedCRC(typ, r[:n]))
			binary.LittleEndian.PutUint16(h[4:6], uint16(n))
			h[6] = typ
			out = append(out, h[:]...)
			out = append(out, r[:n]...)
			r, first = r[n:], false
			if last {
				break
			}
		}
	}
	return out
}

// encodeEntity is the EntityProto of a document (path relative to the
// database, in app "dev~project" as the emulator writes).
func encodeEntity(app, path string, fields map[string]*pb.Value, db DatabaseName) []byte {
	segs := strings.Split(path, "/")
	var key []byte
	key = protowire.AppendTag(key, 13, protowire.BytesType)
	key = protowire.AppendString(key, app)
	key = protowire.AppendTag(key, 14, protowire.BytesType)
	key = protowire.AppendBytes(key, pathGroups(segs, 1, 2, 4))
	var b []byte
	b = protowire.AppendTag(b, 13, protowire.BytesType)
	b = protowire.AppendBytes(b, key)
	b = appendProperties(b, fields, db)
	b = protowire.AppendTag(b, 16, protowire.BytesType)
	b = protowire.AppendBytes(b, pathGroups(segs[:min(2, len(segs))], 1, 2, 4))
	return b
}

func pathGroups(segs []string, elem, kind, name protowire.Number) []byte {
	var b []byte
	for i := 0; i+1 < len(segs); i += 2 {
		b = protowire.AppendTag(b, elem, protowire.StartGroupType)
		b = protowire.AppendTag(b, kind, protowire.BytesType)
		b = protowire.AppendString(b, segs[i])
		b = protowire.AppendTag(b, name, protowire.BytesType)
		b = protowire.AppendString(b, segs[i+1])
		b = protowire.AppendTag(b, elem, protowire.EndGroupType)
	}
	return b
}

func appendProperties(b []byte, fields map[string]*pb.Value, db DatabaseName) []byte {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := fields[k]
		if av, ok := v.GetValueType().(*pb.Value_ArrayValue); ok {
			if len(av.ArrayValue.GetValues()) == 0 {
				b = appendProperty(b, k, meaningEmpty, false, nil)
				continue
			}
			for _, e := range av.ArrayValue.GetValues() {
				m, val := encodeEntityValue(e, db)
				b = appendProperty(b, k, m, true, val)
			}
			continue
		}
		m, val := encodeEntityValue(v, db)
		b = appendProperty(b, k, m, false, val)
	}
	return b
}

func appendProperty(b []byte, name string, meaning uint64, multiple bool, value []byte) []byte {
	var p []byte
	if meaning != 0 {
		p = protowire.AppendTag(p, 1, protowire.VarintType)
		p = protowire.AppendVarint(p, meaning)
	}
	p = protowire.AppendTag(p, 3, protowire.BytesType)
	p = protowire.AppendString(p, name)
	p = protowire.AppendTag(p, 4, protowire.VarintType)
	p = protowire.AppendVarint(p, protowire.EncodeBool(multiple))
	p = protowire.AppendTag(p, 5, protowire.BytesType)
	p = protowire.AppendBytes(p, value)
	b = protowire.AppendTag(b, 15, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

// encodeEntityValue is a PropertyValue and its meaning.
func encodeEntityValue(v *pb.Value, db DatabaseName) (uint64, []byte) {
	var b []byte
	switch x := v.GetValueType().(type) {
	case *pb.Value_BooleanValue:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return 0, protowire.AppendVarint(b, protowire.EncodeBool(x.BooleanValue))
	case *pb.Value_IntegerValue:
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		return 0, protowire.AppendVarint(b, uint64(x.IntegerValue))
	case *pb.Value_DoubleValue:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		return 0, protowire.AppendFixed64(b, math.Float64bits(x.DoubleValue))
	case *pb.Value_TimestampValue:
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		return meaningWhen, protowire.AppendVarint(b, uint64(x.TimestampValue.AsTime().UnixMicro()))
	case *pb.Value_StringValue:
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		return 0, protowire.AppendString(b, x.StringValue)
	case *pb.Value_BytesValue:
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		return meaningBlob, protowire.AppendBytes(b, x.BytesValue)
	case *pb.Value_ReferenceValue:
		rel := strings.TrimPrefix(x.ReferenceValue, db.Documents()+"/")
		var g []byte
		g = protowire.AppendTag(g, 13, protowire.BytesType)
		g = protowire.AppendString(g, "dev~"+db.Project)
		g = append(g, pathGroups(strings.Split(rel, "/"), 14, 15, 17)...)
		b = protowire.AppendTag(b, 12, protowire.StartGroupType)
		b = append(b, g...)
		return 0, protowire.AppendTag(b, 12, protowire.EndGroupType)
	case *pb.Value_GeoPointValue:
		b = protowire.AppendTag(b, 5, protowire.StartGroupType)
		b = protowire.AppendTag(b, 6, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(x.GeoPointValue.GetLatitude()))
		b = protowire.AppendTag(b, 7, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(x.GeoPointValue.GetLongitude()))
		return meaningPoint, protowire.AppendTag(b, 5, protowire.EndGroupType)
	case *pb.Value_MapValue:
		var e []byte
		var key []byte
		key = protowire.AppendTag(key, 13, protowire.BytesType)
		key = protowire.AppendString(key, "")
		key = protowire.AppendTag(key, 14, protowire.BytesType)
		key = protowire.AppendBytes(key, nil)
		e = protowire.AppendTag(e, 13, protowire.BytesType)
		e = protowire.AppendBytes(e, key)
		e = appendProperties(e, x.MapValue.GetFields(), db)
		e = protowire.AppendTag(e, 16, protowire.BytesType)
		e = protowire.AppendBytes(e, nil)
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		return meaningMap, protowire.AppendBytes(b, e)
	}
	return 0, nil // null
}
