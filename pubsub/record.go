package pubsub

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/pyric/pyric/sandbox/service"
)

// A record's stored form: a version byte, then uvarints and
// length-prefixed strings, the data last:
//
//	1 | flags (1: acked) | attempts | id | publish time (unix ns, varint)
//	  | len ordering key | key | n attributes | (len k | k | len v | v)...
//	  | data
//
// It is several times cheaper to write and read than JSON, which a
// record starting with '{' still is (decodeRecord reads both).
const recordV1 = 1

func encodeRecord(r *record) []byte { return appendRecord(make([]byte, 0, recordSize(r)), r) }

// recordSize bounds the size of r encoded.
func recordSize(r *record) int {
	m := r.Msg
	n := 32 + len(m.Data) + len(m.OrderingKey)
	for k, v := range m.Attributes {
		n += len(k) + len(v) + 10
	}
	return n
}

// appendRecord appends r encoded to b.
func appendRecord(b []byte, r *record) []byte {
	m := r.Msg
	b = append(b, recordV1)
	var flags uint64
	if r.Acked {
		flags = 1
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(r.Attempts))
	id, _ := strconv.ParseUint(m.ID, 10, 64)
	b = binary.AppendUvarint(b, id)
	b = binary.AppendVarint(b, m.PublishTime.UnixNano())
	b = appendString(b, m.OrderingKey)
	b = binary.AppendUvarint(b, uint64(len(m.Attributes)))
	for k, v := range m.Attributes {
		b = appendString(b, k)
		b = appendString(b, v)
	}
	return append(b, m.Data...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadRecord = errors.New("pubsub: unreadable record")

// decodeRecord reads a stored record (copying what it keeps: the bytes
// belong to the transaction).
func decodeRecord(b []byte, r *record) error {
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, r); err != nil {
			return err
		}
		if r.Msg == nil {
			return errBadRecord
		}
		return nil
	}
	if len(b) == 0 || b[0] != recordV1 {
		return errBadRecord
	}
	d := decoder{b: b[1:]}
	flags := d.uvarint()
	attempts := d.uvarint()
	id := d.uvarint()
	ns := d.varint()
	m := &Message{ID: strconv.FormatUint(id, 10), PublishTime: time.Unix(0, ns).UTC(), OrderingKey: d.str()}
	if na := d.uvarint(); na > 0 && na <= MaxAttributes*2 {
		m.Attributes = make(map[string]string, na)
		for range na {
			k := d.str()
			m.Attributes[k] = d.str()
		}
	} else if na > 0 {
		return errBadRecord
	}
	if d.bad {
		return errBadRecord
	}
	if len(d.b) > 0 {
		m.Data = append([]byte(nil), d.b...)
	}
	*r = record{Msg: m, Attempts: int(attempts), Acked: flags&1 != 0}
	return nil
}

type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func putRecord(tx service.Tx, key []byte, r *record) error { return tx.Put(key, encodeRecord(r)) }

// appendRecordJSON appends r as encoding/json writes a record (the same
// fields and values; Restore reads either), without reflection.
func appendRecordJSON(b []byte, r *record) []byte {
	m := r.Msg
	b = append(b, `{"m":{"id":`...)
	b = appendJSONString(b, m.ID)
	if len(m.Data) > 0 {
		b = append(b, `,"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, m.Data)
		b = append(b, '"')
	}
	if len(m.Attributes) > 0 {
		b = append(b, `,"attributes":{`...)
		for i, k := range slices.Sorted(maps.Keys(m.Attributes)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, m.Attributes[k])
		}
		b = append(b, '}')
	}
	if m.OrderingKey != "" {
		b = append(b, `,"orderingKey":`...)
		b = appendJSONString(b, m.OrderingKey)
	}
	b = append(b, `,"publishTime":"`...)
	b = m.PublishTime.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `"}`...)
	if r.Attempts != 0 {
		b = append(b, `,"a":`...)
		b = strconv.AppendInt(b, int64(r.Attempts), 10)
	}
	if r.Acked {
		b = append(b, `,"k":true`...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: plain printable ASCII
// directly, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
