package storage

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	"github.com/pyric/pyric/internal/jsonstr"
)

// appendObjectJSON appends o as encoding/json writes it, without
// reflection: every upload encodes its object's record once for the log
// and once for the capture, and through encoding/json that was a tenth
// of a small upload's CPU time. o's times must be within years 0 to
// 9999 (encoding/json refuses others: see timesEncodable).
func appendObjectJSON(b []byte, o *Object) []byte {
	b = append(b, `{"bucket":`...)
	b = jsonstr.Append(b, o.Bucket)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, o.Name)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, o.Generation, 10)
	b = append(b, `,"metageneration":`...)
	b = strconv.AppendInt(b, o.Metageneration, 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, o.Size, 10)
	for _, f := range [...]struct{ key, v string }{{`,"contentType":`, o.ContentType}, {`,"contentEncoding":`, o.ContentEncoding},
		{`,"contentDisposition":`, o.ContentDisposition}, {`,"contentLanguage":`, o.ContentLanguage}, {`,"cacheControl":`, o.CacheControl}} {
		if f.v != "" {
			b = jsonstr.Append(append(b, f.key...), f.v)
		}
	}
	if len(o.Metadata) > 0 {
		b = jsonstr.AppendMap(append(b, `,"metadata":`...), o.Metadata)
	}
	b = append(b, `,"md5Hash":`...)
	b = jsonstr.Append(b, o.MD5Hash)
	b = append(b, `,"crc32c":`...)
	b = jsonstr.Append(b, o.CRC32C)
	for _, f := range [...]struct {
		key string
		t   time.Time
	}{{`,"timeCreated":`, o.TimeCreated}, {`,"updated":`, o.Updated}} {
		b = append(f.t.AppendFormat(append(append(b, f.key...), '"'), time.RFC3339Nano), '"')
	}
	return append(b, '}')
}

// timesEncodable says whether o's times are within the years JSON
// writes (0 to 9999); encoding/json refuses others, and says why.
func timesEncodable(o *Object) bool {
	y1, y2 := o.TimeCreated.Year(), o.Updated.Year()
	return y1 >= 0 && y1 <= 9999 && y2 >= 0 && y2 <= 9999
}

// marshalObject is json.Marshal(o).
func marshalObject(o *Object) ([]byte, error) {
	if !timesEncodable(o) {
		return json.Marshal(o)
	}
	return appendObjectJSON(make([]byte, 0, 320), o), nil
}

// marshalRecord is json.Marshal(objectRecord{o, inline, data}).
func marshalRecord(o *Object, data []byte, inline bool) ([]byte, error) {
	return appendRecord(make([]byte, 0, 352+base64.StdEncoding.EncodedLen(len(data))), o, data, inline)
}

// appendRecord appends marshalRecord's encoding to dst.
func appendRecord(dst []byte, o *Object, data []byte, inline bool) ([]byte, error) {
	if !timesEncodable(o) {
		b, err := json.Marshal(objectRecord{Object: o, Inline: inline, Data: data})
		return append(dst, b...), err
	}
	b := appendObjectJSON(dst, o)
	b = b[:len(b)-1] // the object's closing brace: the record's fields follow
	if inline {
		b = append(b, `,"inline":true`...)
	}
	if len(data) > 0 {
		b = append(b, `,"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, data)
		b = append(b, '"')
	}
	return append(b, '}'), nil
}
