package event

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends e's JSON encoding to dst: the bytes a json.Encoder
// with HTML escaping off writes for e, without its trailing newline. The
// request and commit events — one or two per document read or written,
// the bulk of any session — are written directly, their payload values
// (the documents' JSON forms: maps, slices, strings, numbers) included;
// other kinds, and values of other types, go through encoding/json. It
// is what session capture writes for each event, once per event, so its
// cost is a share of every write's.
func AppendJSON(dst []byte, e *Event) ([]byte, error) {
	b, _, err := AppendJSONAfter(dst, e)
	return b, err
}

// AppendJSONAfter is AppendJSON that also says where, in the bytes it
// returns, its commit payload's after value is (b[after[0]:after[1]]):
// session capture takes a changed record's value from there instead of
// encoding the record again. after is zero when e has no commit payload,
// or was written through encoding/json.
func AppendJSONAfter(dst []byte, e *Event) (b []byte, after [2]int, err error) {
	if e.Boundary != nil || e.Gap != nil || e.Invocation != nil {
		b, err = appendFallback(dst, e)
		return b, after, err
	}
	a := jsonAppender{b: dst}
	a.b = append(a.b, `{"seq":`...)
	a.b = strconv.AppendUint(a.b, e.Seq, 10)
	a.key(`,"id":`)
	a.str(e.ID)
	a.key(`,"at":`)
	a.time(e.At)
	a.key(`,"kind":`)
	a.str(string(e.Kind))
	a.key(`,"service":`)
	a.str(e.Service)
	a.key(`,"actor":{"kind":`)
	a.str(string(e.Actor.Kind))
	a.optStr(`,"name":`, e.Actor.Name)
	a.optStr(`,"invocation":`, e.Actor.Invocation)
	a.key(`},"identity":{"lens":`)
	a.str(string(e.Identity.Lens))
	a.optStr(`,"uid":`, e.Identity.UID)
	if e.Identity.Admin {
		a.key(`,"admin":true`)
	}
	if len(e.Identity.Token) > 0 {
		a.key(`,"token":`)
		a.object(e.Identity.Token)
	}
	a.key(`}`)
	a.optStr(`,"method":`, e.Method)
	a.optStr(`,"path":`, e.Path)
	a.optStr(`,"origin":`, string(e.Origin))
	if g := e.Group; g != nil {
		a.key(`,"group":{"id":`)
		a.str(g.ID)
		a.key(`,"kind":`)
		a.str(string(g.Kind))
		a.key(`}`)
	}
	if f := e.Err; f != nil {
		a.key(`,"error":{"code":`)
		a.str(f.Code)
		a.key(`,"message":`)
		a.str(f.Message)
		a.key(`}`)
	}
	if r := e.Request; r != nil {
		a.request(r)
	}
	if c := e.Commit; c != nil {
		after = a.commit(c)
	}
	if l := e.Listener; l != nil {
		a.listener(l)
	}
	if m := e.Mutation; m != nil {
		a.mutation(m)
	}
	a.key(`}`)
	if a.err != nil {
		b, err = appendFallback(dst, e)
		return b, [2]int{}, err
	}
	return a.b, after, nil
}

// Appender is a payload value that writes its own JSON (an Auth account):
// AppendJSON appends the compact, valid JSON its MarshalJSON returns, and
// AppendJSON writes that instead of going through encoding/json, which
// would call MarshalJSON and then check and copy its bytes again.
type Appender interface {
	AppendJSON(dst []byte) []byte
}

// appendFallback is AppendJSON through encoding/json.
func appendFallback(dst []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsonAppender writes JSON as encoding/json does (HTML escaping off); err
// is the first value it could not write (AppendJSON then starts over
// through encoding/json, whose error names the problem).
type jsonAppender struct {
	b   []byte
	err error
}

func (a *jsonAppender) key(k string) { a.b = append(a.b, k...) }

func (a *jsonAppender) optStr(k, s string) {
	if s != "" {
		a.key(k)
		a.str(s)
	}
}

func (a *jsonAppender) request(r *Request) {
	a.key(`,"verdict":`)
	a.str(string(r.Verdict))
	a.key(`,"durationMs":`)
	a.float(r.DurationMs)
	if r.Rule != nil {
		a.key(`,"rule":`)
		a.other(r.Rule)
	}
	if len(r.Trace) > 0 {
		a.key(`,"trace":`)
		a.other(r.Trace)
	}
	if r.Decision != nil {
		a.key(`,"decision":`)
		a.other(r.Decision)
	}
	if s := r.Seen; s != nil {
		a.key(`,"seen":{`)
		a.seen(s)
		a.key(`}`)
	}
}

// seen writes the fields of s (between its braces).
func (a *jsonAppender) seen(s *Seen) {
	sep := ""
	field := func(k string) {
		a.b = append(a.b, sep...)
		a.b = append(a.b, k...)
		sep = ","
	}
	if s.Data != nil {
		field(`"data":`)
		a.value(s.Data)
	}
	if s.Before != nil {
		field(`"resource":`)
		a.resource(s.Before)
	}
	if s.Query != nil {
		field(`"query":`)
		a.value(s.Query)
	}
	if len(s.Updates) > 0 {
		field(`"updates":`)
		a.object(s.Updates)
	}
	if s.After != nil {
		field(`"requestResource":`)
		a.resource(s.After)
	}
	if len(s.Lookups) > 0 {
		field(`"lookups":[`)
		for i, l := range s.Lookups {
			if i > 0 {
				a.b = append(a.b, ',')
			}
			a.key(`{"function":`)
			a.str(l.Function)
			a.key(`,"path":`)
			a.str(l.Path)
			a.key(`,"exists":`)
			a.b = strconv.AppendBool(a.b, l.Exists)
			if l.Data != nil {
				a.key(`,"data":`)
				a.value(l.Data)
			}
			a.key(`}`)
		}
		a.key(`]`)
	}
	if !s.Time.IsZero() {
		field(`"time":`)
		a.time(s.Time)
	}
}

func (a *jsonAppender) resource(r *Resource) {
	a.key(`{"exists":`)
	a.b = strconv.AppendBool(a.b, r.Exists)
	if r.Data != nil {
		a.key(`,"data":`)
		a.value(r.Data)
	}
	a.key(`}`)
}

// mutation writes a Mutation's fields (each upload, copy and delete of
// Storage, each Auth and RTDB change has one: through encoding/json, it
// was a tenth of a small upload's CPU time).
// listener writes a listener event's payload: a Realtime Database write
// that reaches a thousand listens records a thousand of them.
func (a *jsonAppender) listener(l *Listener) {
	a.key(`,"phase":`)
	a.str(string(l.Phase))
	a.key(`,"listenerId":`)
	a.str(l.ListenerID)
	if t := l.Target; t != nil {
		a.key(`,"target":{"kind":`)
		a.str(t.Kind)
		a.optStr(`,"path":`, t.Path)
		if t.Query != nil {
			a.key(`,"query":`)
			a.value(t.Query)
		}
		a.key(`}`)
	}
	a.optInt(`,"size":`, l.Size)
	a.optInt(`,"addedCount":`, l.Added)
	a.optInt(`,"modifiedCount":`, l.Modified)
	a.optInt(`,"removedCount":`, l.Removed)
	if t := l.Trigger; t != nil {
		a.key(`,"trigger":{"method":`)
		a.str(t.Method)
		a.optStr(`,"path":`, t.Path)
		a.key(`}`)
	}
}

func (a *jsonAppender) optInt(k string, n int) {
	if n != 0 {
		a.key(k)
		a.b = strconv.AppendInt(a.b, int64(n), 10)
	}
}

func (a *jsonAppender) mutation(m *Mutation) {
	a.key(`,"op":`)
	a.str(m.Op)
	a.optStr(`,"project":`, m.Project)
	a.optStr(`,"tenant":`, m.Tenant)
	if m.Previous != nil {
		a.key(`,"previous":`)
		a.value(m.Previous)
	}
	if m.Current != nil {
		a.key(`,"current":`)
		a.value(m.Current)
	}
	a.optStr(`,"provider":`, m.Provider)
	a.optStr(`,"note":`, m.Note)
}

// commit writes a Commit's fields and returns where its after value is.
func (a *jsonAppender) commit(c *Commit) (after [2]int) {
	a.key(`,"requestTime":`)
	a.time(c.RequestTime)
	a.key(`,"before":`)
	a.value(c.Before)
	a.key(`,"after":`)
	after[0] = len(a.b)
	a.value(c.After)
	after[1] = len(a.b)
	if c.Written != nil {
		a.key(`,"written":`)
		if sameMap(c.Written, c.After) && a.err == nil {
			// A set's written fields are its document after: the engine
			// shares the map, and its JSON is the bytes just written.
			a.b = append(a.b, a.b[after[0]:after[1]]...)
		} else {
			a.value(c.Written)
		}
	}
	if len(c.Sentinels) > 0 {
		a.key(`,"sentinels":[`)
		for i, s := range c.Sentinels {
			if i > 0 {
				a.b = append(a.b, ',')
			}
			a.key(`{"field":`)
			a.str(s.Field)
			a.key(`,"kind":`)
			a.str(string(s.Kind))
			a.key(`}`)
		}
		a.key(`]`)
	}
	a.optStr(`,"autoId":`, c.AutoID)
	a.optStr(`,"database":`, c.Database)
	for _, t := range []struct {
		k string
		t time.Time
	}{{`,"createTime":`, c.CreateTime}, {`,"updateTime":`, c.UpdateTime}, {`,"beforeCreateTime":`, c.BeforeCreateTime}, {`,"beforeUpdateTime":`, c.BeforeUpdateTime}} {
		if !t.t.IsZero() {
			a.key(t.k)
			a.time(t.t)
		}
	}
	if c.Scope != nil {
		a.key(`,"scope":`)
		a.other(c.Scope)
	}
	return after
}

// sameMap says a and b are one map[string]any (not two equal ones).
func sameMap(a, b any) bool {
	ma, ok := a.(map[string]any)
	if !ok || ma == nil {
		return false
	}
	mb, ok := b.(map[string]any)
	return ok && mb != nil && reflect.ValueOf(ma).UnsafePointer() == reflect.ValueOf(mb).UnsafePointer()
}

// value writes v, a JSON form: the types documents' JSON forms are built
// of directly, any other through encoding/json.
func (a *jsonAppender) value(v any) {
	switch x := v.(type) {
	case nil:
		a.b = append(a.b, "null"...)
	case string:
		a.str(x)
	case bool:
		a.b = strconv.AppendBool(a.b, x)
	case json.Number:
		if x == "" {
			a.b = append(a.b, '0')
		} else if isNumber(string(x)) {
			a.b = append(a.b, x...)
		} else {
			a.fail()
		}
	case float64:
		a.float(x)
	case int64:
		a.b = strconv.AppendInt(a.b, x, 10)
	case int32:
		a.b = strconv.AppendInt(a.b, int64(x), 10)
	case int:
		a.b = strconv.AppendInt(a.b, int64(x), 10)
	case map[string]any:
		a.object(x)
	case []any:
		if x == nil {
			a.b = append(a.b, "null"...)
			return
		}
		a.b = append(a.b, '[')
		for i, e := range x {
			if i > 0 {
				a.b = append(a.b, ',')
			}
			a.value(e)
		}
		a.b = append(a.b, ']')
	case Appender:
		a.b = x.AppendJSON(a.b)
	default:
		a.other(v)
	}
}

// object writes m with its keys sorted, as encoding/json does.
func (a *jsonAppender) object(m map[string]any) {
	if m == nil {
		a.b = append(a.b, "null"...)
		return
	}
	var keys []string
	var small [16]string
	if len(m) <= len(small) {
		keys = small[:0]
	} else {
		keys = make([]string, 0, len(m))
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	a.b = append(a.b, '{')
	for i, k := range keys {
		if i > 0 {
			a.b = append(a.b, ',')
		}
		a.str(k)
		a.b = append(a.b, ':')
		a.value(m[k])
	}
	a.b = append(a.b, '}')
}

// other writes v through encoding/json.
func (a *jsonAppender) other(v any) {
	if a.err != nil {
		return
	}
	b, err := appendFallback(a.b, v)
	if err != nil {
		a.err = err
		return
	}
	a.b = b
}

func (a *jsonAppender) fail() {
	if a.err == nil {
		a.err = errNotAppended
	}
}

var errNotAppended = &json.UnsupportedValueError{Str: "not appended"}

// float writes f as encoding/json writes a float64.
func (a *jsonAppender) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		a.fail()
		return
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	a.b = strconv.AppendFloat(a.b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9
		if n := len(a.b); n >= 4 && a.b[n-4] == 'e' && a.b[n-3] == '-' && a.b[n-2] == '0' {
			a.b[n-2] = a.b[n-1]
			a.b = a.b[:n-1]
		}
	}
}

// time writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds); a year it refuses goes to encoding/json for its error.
func (a *jsonAppender) time(t time.Time) {
	b, ok := appendTime(append(a.b, '"'), t)
	if !ok {
		a.fail()
		return
	}
	a.b = append(b, '"')
}

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string the way encoding/json does with HTML
// escaping off: invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func (a *jsonAppender) str(s string) {
	b := append(a.b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most strings (ids, paths, kinds) are plain ASCII: they are
		// skipped eight bytes at a time, where a byte at a time was half
		// of what encoding a listener event cost.
		for i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	a.b = append(b, '"')
}

// plain8 says none of w's eight bytes needs str's attention: no control
// character, quote, backslash or non-ASCII byte. Each test is exact for
// the word as a whole (it may flag the wrong byte, never a word without
// one): a byte below 0x20, (x - 0x20…) & ^x & 0x80…; a byte equal to
// c, the zero byte of x ^ c….
func plain8(w string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	q, bs := x^('"'*ones), x^('\\'*ones)
	special := (x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs | x
	return special&highs == 0
}

// isNumber reports whether s is a JSON number (what encoding/json accepts
// in a json.Number).
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
