package snapshot

import (
	"encoding/binary"
	"errors"
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

	"github.com/pyric/pyric/firestore"
)

// The official Firestore emulator's export (firestore_export/) is the
// Datastore export format: LevelDB log files (all_namespaces/all_kinds/
// output-N) whose records are EntityProto messages (the onestore v3
// schema): the key's path of (kind, name) elements, and one property per
// field, or one per element for an array (multiple=true), with a meaning
// that types the value (7 timestamp in microseconds, 9 geo point, 14
// bytes, 19 an embedded entity = a map).

// ErrExport is an export directory that cannot be read.
var ErrExport = errors.New("invalid Emulator Suite export")

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
			return nil, fmt.Errorf("%w: record at offset %d overruns its block", ErrExport, off)
		}
		payload := data[off+logHeader : off+logHeader+n]
		if binary.LittleEndian.Uint32(h[0:4]) != maskedCRC(typ, payload) {
			return nil, fmt.Errorf("%w: record at offset %d fails its checksum", ErrExport, off)
		}
		off += logHeader + n
		switch typ {
		case recFull:
			if inFrag {
				return nil, fmt.Errorf("%w: unterminated fragmented record before offset %d", ErrExport, off)
			}
			out = append(out, append([]byte(nil), payload...))
		case recFirst:
			pending, inFrag = append([]byte(nil), payload...), true
		case recMiddle, recLast:
			if !inFrag {
				return nil, fmt.Errorf("%w: record fragment without a start at offset %d", ErrExport, off)
			}
			pending = append(pending, payload...)
			if typ == recLast {
				out, pending, inFrag = append(out, pending), nil, false
			}
		default:
			return nil, fmt.Errorf("%w: unknown record type %d at offset %d", ErrExport, typ, off)
		}
	}
	return out, nil
}

// ReadFirestoreExport reads a Firestore export directory (the directory
// holding all_namespaces/, or one level above it) into documents by
// relative path, as pb fields.
func ReadFirestoreExport(dir string, db firestore.DatabaseName) (map[string]map[string]*pb.Value, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "all_namespaces", "all_kinds", "output-*"))
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join(dir, "*", "all_namespaces", "all_kinds", "output-*"))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s has no all_namespaces/all_kinds/output-* files", ErrExport, dir)
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
				return nil, fmt.Errorf("%s: record %d: %w: an entity without a key", f, i, ErrExport)
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
			return nil, fmt.Errorf("%w: bad tag", ErrExport)
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
			return nil, fmt.Errorf("%w: unexpected wire type %d", ErrExport, typ)
		}
		if n < 0 {
			return nil, fmt.Errorf("%w: truncated field %d", ErrExport, num)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}

// decodeEntity returns an EntityProto's document path and fields.
func decodeEntity(b []byte, db firestore.DatabaseName) (string, map[string]*pb.Value, error) {
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
				out[name] = firestore.Array()
			case multiple:
				if !arrays[name] {
					arrays[name] = true
					out[name] = firestore.Array()
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

func decodeProperty(b []byte, db firestore.DatabaseName) (name string, v *pb.Value, multiple, empty bool, err error) {
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
	v, err = decodeValue(value, meaning, db)
	return name, v, multiple, false, err
}

func decodeValue(b []byte, meaning uint64, db firestore.DatabaseName) (*pb.Value, error) {
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return firestore.Null(), nil
	}
	f := fs[0]
	switch f.num {
	case 1: // int64Value
		if meaning == meaningWhen {
			us := int64(f.v)
			return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(time.UnixMicro(us))}}, nil
		}
		return firestore.Int(int64(f.v)), nil
	case 2:
		return firestore.Bool(f.v != 0), nil
	case 3: // stringValue
		switch meaning {
		case meaningMap:
			_, m, err := decodeEntity(f.b, db)
			if err != nil {
				return nil, err
			}
			return firestore.Map(m), nil
		case meaningBlob, meaningBytes:
			return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: append([]byte(nil), f.b...)}}, nil
		}
		return firestore.String(string(f.b)), nil
	case 4:
		return firestore.Double(math.Float64frombits(f.v)), nil
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
	return nil, fmt.Errorf("%w: unsupported value field %d (meaning %d)", ErrExport, f.num, meaning)
}
