package snapshot

import (
	"encoding/binary"
	"math"
	"sort"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pyric/pyric/firestore"
)

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
func encodeEntity(app, path string, fields map[string]*pb.Value, db firestore.DatabaseName) []byte {
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

func appendProperties(b []byte, fields map[string]*pb.Value, db firestore.DatabaseName) []byte {
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
				m, val := encodeValue(e, db)
				b = appendProperty(b, k, m, true, val)
			}
			continue
		}
		m, val := encodeValue(v, db)
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

// encodeValue is a PropertyValue and its meaning.
func encodeValue(v *pb.Value, db firestore.DatabaseName) (uint64, []byte) {
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
