package messaging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxJSONDepth bounds the nesting of a request body (webpush.notification
// and apns.payload are free-form objects).
const maxJSONDepth = 64

// jobj is a JSON object with its keys in document order, so the oneof
// check reports the second target the way production does.
type jobj []jkv

type jkv struct {
	k string
	v any
}

// parseJSON reads one JSON value into jobj / []any / string / json.Number /
// bool / nil, rejecting trailing data.
func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := readValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func readValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var o jobj
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, eofError(err)
				}
				k, _ := kt.(string)
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o = append(o, jkv{k, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, eofError(err)
			}
			if o == nil {
				o = jobj{}
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, eofError(err)
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	}
	return tok, nil
}

func eofError(err error) error {
	if err == io.EOF {
		return errors.New("unexpected end of input")
	}
	return err
}

// plain converts a parsed value to the ordinary encoding/json shapes
// (map[string]any), keeping numbers as json.Number so they re-encode
// exactly.
func plain(v any) any {
	switch v := v.(type) {
	case jobj:
		m := make(map[string]any, len(v))
		for _, kv := range v {
			m[kv.k] = plain(kv.v)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = plain(x)
		}
		return out
	}
	return v
}

// render prints a JSON value the way the API front end quotes it in
// "Invalid value" errors, truncated.
func render(v any) string {
	b, err := json.Marshal(plain(v))
	if err != nil {
		return "?"
	}
	s := string(b)
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return s
}

// decoder walks a parsed body against the schema, producing the request
// in canonical proto-JSON form (lowerCamel names, canonical enums and
// durations).
type decoder struct{}

func invalidValue(path, typ string, v any, extra string) *Error {
	msg := fmt.Sprintf("Invalid value at '%s' (%s), %s", path, typ, render(v))
	if extra != "" {
		msg = fmt.Sprintf("Invalid value at '%s' (%s), %s", path, typ, extra)
	}
	return invalidJSON(path, msg)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (d decoder) message(path string, m *msgType, v any) (map[string]any, *Error) {
	o, ok := v.(jobj)
	if !ok {
		if path == "" {
			return nil, invalidJSON("", "Invalid JSON payload received. Unknown name \"\": Root element must be a message.")
		}
		return nil, invalidValue(path, typePrefix+m.name, v, "")
	}
	out := map[string]any{}
	oneofs := map[string]string{}
	for _, kv := range o {
		f := m.byName[kv.k]
		if f == nil {
			at := ""
			if path != "" {
				at = " at '" + path + "'"
			}
			return nil, invalidJSON(path, fmt.Sprintf("Invalid JSON payload received. Unknown name %q%s: Cannot find field.", kv.k, at))
		}
		if kv.v == nil { // proto3 JSON: null is the default value
			continue
		}
		if f.oneof != "" {
			if prev, set := oneofs[f.oneof]; set && prev != f.proto {
				return nil, invalidJSON(path, fmt.Sprintf("Invalid value at '%s' (oneof), oneof field '%s' is already set. Cannot set '%s'", path, f.oneof, f.proto))
			}
			oneofs[f.oneof] = f.proto
		}
		val, err := d.value(join(path, f.proto), f, kv.v)
		if err != nil {
			return nil, err
		}
		out[f.json] = val
	}
	return out, nil
}

func (d decoder) value(path string, f *field, v any) (any, *Error) {
	switch f.kind {
	case kString:
		s, ok := v.(string)
		if !ok {
			return nil, invalidValue(path, "TYPE_STRING", v, "")
		}
		return s, nil
	case kBool:
		b, ok := v.(bool)
		if !ok {
			return nil, invalidValue(path, "TYPE_BOOL", v, "")
		}
		return b, nil
	case kInt32:
		n, ok := toInt32(v)
		if !ok {
			return nil, invalidValue(path, "TYPE_INT32", v, "")
		}
		return n, nil
	case kFloat:
		x, ok := toFloat(v)
		if !ok {
			return nil, invalidValue(path, "TYPE_FLOAT", v, "")
		}
		return x, nil
	case kEnum:
		return d.enum(path, f.enum, v)
	case kDuration:
		s, ok := v.(string)
		if !ok {
			return nil, invalidValue(path, typePrefix+"google.protobuf.Duration", v, "")
		}
		dur, err := ParseDuration(s)
		if err != nil {
			return nil, invalidValue(path, typePrefix+"google.protobuf.Duration", v, fmt.Sprintf("Field '%s', %s", f.json, err.Error()))
		}
		return FormatDuration(dur), nil
	case kTimestamp:
		s, ok := v.(string)
		if !ok {
			return nil, invalidValue(path, typePrefix+"google.protobuf.Timestamp", v, "")
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || t.Year() < 1 || t.Year() > 9999 {
			return nil, invalidValue(path, typePrefix+"google.protobuf.Timestamp", v, fmt.Sprintf("Field '%s', Invalid time format: Failed to parse input", f.json))
		}
		return t.UTC().Format(time.RFC3339Nano), nil
	case kStringMap:
		o, ok := v.(jobj)
		if !ok {
			return nil, invalidValue(path, typePrefix+"google.firebase.fcm.v1."+f.entry, v, "")
		}
		m := make(map[string]string, len(o))
		for i, kv := range o {
			s, ok := kv.v.(string)
			if !ok {
				return nil, invalidValue(fmt.Sprintf("%s[%d].value", path, i), "TYPE_STRING", kv.v, "")
			}
			m[kv.k] = s
		}
		return m, nil
	case kStruct:
		o, ok := v.(jobj)
		if !ok {
			return nil, invalidValue(path, typePrefix+"google.protobuf.Struct", v, "")
		}
		return plain(o), nil
	case kStrings, kDurations:
		a, ok := v.([]any)
		if !ok {
			typ := "TYPE_STRING"
			if f.kind == kDurations {
				typ = typePrefix + "google.protobuf.Duration"
			}
			return nil, invalidValue(path, typ, v, "")
		}
		out := make([]string, 0, len(a))
		for i, x := range a {
			el := field{proto: f.proto, json: f.json, kind: kString}
			if f.kind == kDurations {
				el.kind = kDuration
			}
			s, err := d.value(fmt.Sprintf("%s[%d]", path, i), &el, x)
			if err != nil {
				return nil, err
			}
			out = append(out, s.(string))
		}
		return out, nil
	case kMessage:
		return d.message(path, f.msg, v)
	}
	return nil, invalidValue(path, "unknown", v, "")
}

func (d decoder) enum(path string, e *enumType, v any) (any, *Error) {
	switch x := v.(type) {
	case string:
		// The API front end matches enum names without regard to case:
		// firebase-admin-go sends android.priority as "high".
		for _, name := range e.values {
			if strings.EqualFold(name, x) {
				return name, nil
			}
		}
	case json.Number:
		if i, err := x.Int64(); err == nil && i >= 0 && i < int64(len(e.values)) {
			return e.values[i], nil
		}
	}
	return nil, invalidValue(path, typePrefix+e.name, v, "")
}

func toInt32(v any) (int32, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, false
	}
	if i, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int32(i), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, false
	}
	return int32(f), true
}

func toFloat(v any) (float64, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// maxDurationSeconds is google.protobuf.Duration's range.
const maxDurationSeconds = 315576000000

// ParseDuration parses a google.protobuf.Duration in its JSON form: an
// optional sign, seconds, up to nine fractional digits and a final "s"
// ("3.5s", "0s", "-1.000000001s"). Errors are worded as the API front end
// words them.
func ParseDuration(s string) (time.Duration, error) {
	if !strings.HasSuffix(s, "s") {
		return 0, errors.New("Illegal duration format; duration must end with 's'")
	}
	body := strings.TrimSuffix(s, "s")
	neg := strings.HasPrefix(body, "-")
	body = strings.TrimPrefix(body, "-")
	secs, frac, hasFrac := strings.Cut(body, ".")
	if secs == "" || !allDigits(secs) {
		return 0, errors.New("Invalid duration format, failed to parse seconds")
	}
	if hasFrac && (frac == "" || len(frac) > 9 || !allDigits(frac)) {
		return 0, errors.New("Invalid duration format, failed to parse nano seconds")
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || n > maxDurationSeconds {
		return 0, errors.New("Duration value is out of range.")
	}
	var nanos int64
	if hasFrac {
		nanos, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	// time.Duration holds about 292 years; longer (valid) durations
	// saturate, which every FCM limit is far below.
	const maxSecs = math.MaxInt64/int64(time.Second) - 1
	if n > maxSecs {
		n = maxSecs
	}
	d := time.Duration(n)*time.Second + time.Duration(nanos)
	if neg {
		d = -d
	}
	return d, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatDuration renders d in canonical proto JSON: 0, 3, 6 or 9
// fractional digits and "s".
func FormatDuration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	secs, nanos := int64(d/time.Second), int64(d%time.Second)
	switch {
	case nanos == 0:
		return fmt.Sprintf("%s%ds", sign, secs)
	case nanos%1e6 == 0:
		return fmt.Sprintf("%s%d.%03ds", sign, secs, nanos/1e6)
	case nanos%1e3 == 0:
		return fmt.Sprintf("%s%d.%06ds", sign, secs, nanos/1e3)
	}
	return fmt.Sprintf("%s%d.%09ds", sign, secs, nanos)
}
