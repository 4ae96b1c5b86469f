package database

import (
	"cmp"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A stored value is the database export format, immutable once stored:
//
//   - a leaf: string, float64 or bool; with a priority it is the map
//     {".value": leaf, ".priority": p};
//   - a node: map[string]any of its non-null children, plus ".priority"
//     when it has one. It is never empty.
//
// rules/rtdb reads this form in place. Writes copy the maps along the
// written path (see tree.go), so a value, once published, never changes
// and readers, listeners and rules need no lock on it.

// Limits production enforces (Firebase "Limits" documentation).
const (
	MaxKeyBytes    = 768
	MaxDepth       = 32
	MaxStringBytes = 10 << 20
	// MaxRESTWrite is the largest REST write body; MaxSDKWrite the largest
	// websocket message.
	MaxRESTWrite = 256 << 20
	MaxSDKWrite  = 16 << 20
)

// validKey reports why a key is illegal, or "".
func badKey(k string) string {
	if k == "" {
		return "empty key"
	}
	if len(k) > MaxKeyBytes {
		return fmt.Sprintf("key longer than %d bytes", MaxKeyBytes)
	}
	if !utf8.ValidString(k) {
		return "key is not valid UTF-8"
	}
	for _, r := range k {
		switch {
		case r == '.' || r == '#' || r == '$' || r == '/' || r == '[' || r == ']':
			return fmt.Sprintf("key %q contains %q (keys can't contain . # $ / [ ])", k, r)
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("key %q contains a control character", k)
		}
	}
	return ""
}

// ParsePath splits a database path ("/a/b", "a/b/", "") into keys,
// validating each. The last key may be ".priority" (setPriority writes
// there).
func ParsePath(p string) ([]string, error) {
	// Counted first, so that the keys take one allocation (none for
	// the root).
	n := 0
	for k := range strings.SplitSeq(p, "/") {
		if k != "" {
			n++
		}
	}
	if n > MaxDepth {
		return nil, errorf(ErrInvalidPath, "path %q is deeper than %d levels", p, MaxDepth)
	}
	var keys []string
	if n > 0 {
		keys = make([]string, 0, n)
		for k := range strings.SplitSeq(p, "/") {
			if k != "" {
				keys = append(keys, k)
			}
		}
	}
	for i, k := range keys {
		if k == ".priority" && i == len(keys)-1 {
			continue
		}
		if why := badKey(k); why != "" {
			return nil, errorf(ErrInvalidPath, "invalid path %q: %s", p, why)
		}
	}
	return keys, nil
}

// CheckRESTPath checks the path of a REST URL as production's REST API
// does before anything else: a key no location can have is "Invalid path:
// Invalid token in path" (its answer, quoted in
// https://github.com/bugthesystem/FireSharp/issues/153 for a key holding a
// "."); other path errors are ParsePath's.
func CheckRESTPath(p string) error {
	if pathOK(p) {
		return nil // every REST request asks: without taking the keys
	}
	_, err := ParsePath(p)
	if err == nil {
		return nil
	}
	for _, k := range strings.Split(p, "/") {
		if k != "" && k != ".priority" && len(k) <= MaxKeyBytes && badKey(k) != "" {
			return errorf(ErrInvalidPath, "Invalid path: Invalid token in path")
		}
	}
	return err
}

// pathOK reports whether ParsePath(p) succeeds, without taking the keys.
func pathOK(p string) bool {
	n, priority := 0, -1
	for k := range strings.SplitSeq(p, "/") {
		switch {
		case k == "":
			continue
		case k == ".priority":
			if priority >= 0 {
				return false // the first is not the last key
			}
			priority = n
		case badKey(k) != "":
			return false
		}
		n++
	}
	return n <= MaxDepth && (priority < 0 || priority == n-1)
}

// joinPath renders keys as "/a/b" ("/" for the root).
// pathOf is joinPath(keys) for the keys ParsePath read from path: path
// itself when it is that rendering already (as clients send paths,
// "/a/b"), instead of a new string built from the keys.
func pathOf(path string, keys []string) string {
	if isJoined(path, keys) {
		return path
	}
	return joinPath(keys)
}

// isJoined reports whether path is joinPath(keys).
func isJoined(path string, keys []string) bool {
	if len(keys) == 0 {
		return path == "/"
	}
	for _, k := range keys {
		if len(path) <= len(k) || path[0] != '/' || path[1:1+len(k)] != k {
			return false
		}
		path = path[1+len(k):]
	}
	return path == ""
}

func joinPath(keys []string) string {
	n := len(keys)
	for _, k := range keys {
		n += len(k)
	}
	if n == 0 {
		return "/"
	}
	var b strings.Builder
	b.Grow(n) // one allocation, where "/" + strings.Join made two
	for _, k := range keys {
		b.WriteByte('/')
		b.WriteString(k)
	}
	return b.String()
}

// Normalize turns a decoded JSON value (encoding/json's any, or Go values
// of the same shapes) into the stored form, resolving server values
// against old (the stored value at the same location) and now (epoch ms).
// Arrays become integer-keyed objects; nulls and empty objects vanish.
func Normalize(in any, old any, now int64) (any, error) {
	return normalize(in, old, now, 0)
}

func normalize(in any, old any, now int64, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errorf(ErrInvalidData, "data is nested deeper than %d levels", MaxDepth)
	}
	switch v := in.(type) {
	case nil:
		return nil, nil
	case bool:
		return v, nil
	case string:
		if len(v) > MaxStringBytes {
			return nil, errorf(ErrTooBig, "string value longer than %d bytes", MaxStringBytes)
		}
		return v, nil
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return nil, errorf(ErrInvalidData, "invalid number %s", v)
		}
		return checkNum(f)
	case float64:
		return checkNum(v)
	case float32:
		return checkNum(float64(v))
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case []any:
		m := make(map[string]any, len(v))
		for i, e := range v {
			m[strconv.Itoa(i)] = e
		}
		return normalize(m, old, now, depth)
	case map[string]any:
		return normalizeMap(v, old, now, depth)
	}
	return nil, errorf(ErrInvalidData, "unsupported value of type %T", in)
}

// stored reports whether in, at depth, is a value in the stored form
// already: what normalize would return an equal copy of (no server
// values, priorities, arrays, nulls, json.Numbers or empty objects, and
// nothing normalize refuses).
func stored(in any, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch v := in.(type) {
	case bool:
		return true
	case string:
		return len(v) <= MaxStringBytes
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case map[string]any:
		if len(v) == 0 {
			return false
		}
		for k, c := range v {
			if c == nil || badKey(k) != "" || !stored(c, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

func checkNum(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errorf(ErrInvalidData, "invalid number %v: NaN and Infinity can't be stored", f)
	}
	return f, nil
}

func normalizeMap(v map[string]any, old any, now int64, depth int) (any, error) {
	if sv, ok := v[".sv"]; ok {
		if len(v) != 1 {
			return nil, errorf(ErrInvalidData, "a server value {\".sv\": …} can't have sibling keys")
		}
		return serverValue(sv, old, now)
	}
	var prio any
	if p, ok := v[".priority"]; ok {
		np, err := normalizePriority(p, old, now)
		if err != nil {
			return nil, err
		}
		prio = np
	}
	if val, ok := v[".value"]; ok {
		for k := range v {
			if k != ".value" && k != ".priority" {
				return nil, errorf(ErrInvalidData, "a {\".value\": …} node can only have .priority beside it, not %q", k)
			}
		}
		leaf, err := normalize(val, leafOf(old), now, depth+1)
		if err != nil {
			return nil, err
		}
		if _, isMap := leaf.(map[string]any); isMap {
			return nil, errorf(ErrInvalidData, ".value must be a primitive, not an object")
		}
		return withPriority(leaf, prio), nil
	}
	out := make(map[string]any, len(v))
	oldm, _ := old.(map[string]any)
	for k, c := range v {
		if k == ".priority" {
			continue
		}
		if why := badKey(k); why != "" {
			return nil, errorf(ErrInvalidData, "invalid data: %s", why)
		}
		nc, err := normalize(c, oldm[k], now, depth+1)
		if err != nil {
			return nil, err
		}
		if nc != nil {
			out[k] = nc
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if prio != nil {
		out[".priority"] = prio
	}
	return out, nil
}

func normalizePriority(p any, old any, now int64) (any, error) {
	if m, ok := p.(map[string]any); ok {
		if sv, ok := m[".sv"]; ok && len(m) == 1 {
			return serverValue(sv, priorityOf(old), now)
		}
	}
	np, err := normalize(p, nil, now, 0)
	if err != nil {
		return nil, err
	}
	switch np.(type) {
	case nil, float64, string:
		return np, nil
	}
	return nil, errorf(ErrInvalidData, "invalid priority: must be a number, a string or null, not %s", typeName(np))
}

func serverValue(sv any, old any, now int64) (any, error) {
	switch s := sv.(type) {
	case string:
		if s == "timestamp" {
			return float64(now), nil
		}
	case map[string]any:
		if inc, ok := s["increment"]; ok && len(s) == 1 {
			d, err := normalize(inc, nil, now, 0)
			if err != nil {
				return nil, err
			}
			df, ok := d.(float64)
			if !ok {
				return nil, errorf(ErrInvalidData, "increment must be a number, not %s", typeName(d))
			}
			if cur, ok := leafOf(old).(float64); ok {
				return cur + df, nil
			}
			return df, nil
		}
	}
	b, _ := json.Marshal(sv)
	return nil, errorf(ErrInvalidData, "invalid server value %s (want \"timestamp\" or {\"increment\": n})", b)
}

func withPriority(leaf, prio any) any {
	if leaf == nil {
		return nil
	}
	if prio == nil {
		return leaf
	}
	return map[string]any{".value": leaf, ".priority": prio}
}

// leafOf returns the primitive of a leaf (unwrapping {".value"}), or the
// node itself.
func leafOf(v any) any {
	if m, ok := v.(map[string]any); ok {
		if lv, ok := m[".value"]; ok {
			return lv
		}
	}
	return v
}

// priorityOf returns the priority of a stored value, or nil.
func priorityOf(v any) any {
	if m, ok := v.(map[string]any); ok {
		return m[".priority"]
	}
	return nil
}

// isNode reports whether v is a node with children.
func isNode(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if _, leaf := m[".value"]; leaf {
		return nil, false
	}
	return m, true
}

// childKeys returns the child keys of a node (no .priority), unsorted.
func childKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != ".priority" {
			keys = append(keys, k)
		}
	}
	return keys
}

func numChildren(m map[string]any) int {
	n := len(m)
	if _, ok := m[".priority"]; ok {
		n--
	}
	return n
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	}
	return "object"
}

// arrayIndex reports whether key k reads back as an array index: a
// decimal integer without leading zeros, of fewer than 10 digits. (Hand
// written: a regular expression here cost more than the rest of Plain,
// which every response and event runs on every key.)
func arrayIndex(k string) bool {
	if len(k) == 0 || len(k) >= 10 || (k[0] == '0' && len(k) > 1) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

// Plain renders a stored value as clients read it with val(): priorities
// dropped, and a node whose keys are all integers with maxKey < 2×count
// read back as an array (missing indexes null), as production does. A
// value that reads back as it is stored (most: no priorities, no
// array-like nodes) is returned itself, not copied: the result may share
// v, which is then not to change (pass a copy, or use plainCopy, for a
// location of the live tree). Every response and commit event runs on
// it; the copy of a small node was most of its cost.
func Plain(v any) any {
	if isPlain(v) {
		return v
	}
	return plainCopy(v)
}

// isPlain reports whether Plain(v) equals v: no node below holds a
// priority or a .value, or reads back as an array.
func isPlain(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	var shape arrayShape
	for k, c := range m {
		if k == ".priority" || k == ".value" {
			return false
		}
		shape.add(k)
		if !isPlain(c) {
			return false
		}
	}
	return !shape.array()
}

// arrayShape tells, from a node's keys, whether it reads back as an
// array: its keys all integers, the largest below twice their count.
type arrayShape struct {
	notAll    bool
	maxKey, n int
}

func (s *arrayShape) add(k string) {
	s.n++
	if !s.notAll && arrayIndex(k) {
		i, _ := strconv.Atoi(k)
		s.maxKey = max(s.maxKey, i)
	} else {
		s.notAll = true
	}
}

func (s arrayShape) array() bool { return !s.notAll && s.n > 0 && s.maxKey < 2*s.n }

// plainCopy is Plain that always copies the nodes it returns.
func plainCopy(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if lv, ok := m[".value"]; ok {
		return lv
	}
	out := make(map[string]any, len(m))
	var shape arrayShape
	for k, c := range m {
		if k == ".priority" {
			continue
		}
		out[k] = plainCopy(c)
		shape.add(k)
	}
	if shape.array() {
		arr := make([]any, shape.maxKey+1)
		for k, c := range out {
			i, _ := strconv.Atoi(k)
			arr[i] = c
		}
		return arr
	}
	return out
}

// Shallow renders a value for ?shallow=true: a node's children become
// true, a leaf stays itself.
func Shallow(v any) any {
	m, ok := isNode(v)
	if !ok {
		return Plain(v)
	}
	out := make(map[string]any, len(m))
	for _, k := range childKeys(m) {
		out[k] = true
	}
	return out
}

// --- ordering ---

// keyInt is the 32-bit integer key k names, if it names one: an
// optional '-', then decimal digits of which at most 10 follow the
// leading zeros. (Hand written: sorting keys calls it twice per
// comparison, and a regular expression was most of a sort's time.)
func keyInt(k string) (int64, bool) {
	digits := strings.TrimPrefix(k, "-")
	if len(digits) == 0 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	if len(strings.TrimLeft(digits, "0")) > 10 {
		return 0, false
	}
	i, err := strconv.ParseInt(k, 10, 64)
	if err != nil || i < math.MinInt32 || i > math.MaxInt32 {
		return 0, false
	}
	return i, true
}

// CompareKeys is production's key order (nameCompare): keys that are
// 32-bit integers first, numerically, then the others as strings.
func CompareKeys(a, b string) int {
	if a == b {
		return 0
	}
	ai, aok := keyInt(a)
	bi, bok := keyInt(b)
	switch {
	case aok && bok:
		if ai != bi {
			return cmp.Compare(ai, bi)
		}
		return cmp.Compare(int64(len(a)), int64(len(b)))
	case aok:
		return -1
	case bok:
		return 1
	}
	return compareUTF16(a, b)
}

// compareUTF16 orders strings by their UTF-16 code units, as production
// (Java's String.compareTo) and the SDKs (JavaScript's <) do. It differs
// from Go's byte order only past the Basic Multilingual Plane: an emoji
// (a surrogate pair, 0xD800…) sorts before U+E000…U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			if ua[0] != ub[0] {
				return cmp.Compare(ua[0], ub[0])
			}
			return cmp.Compare(ua[1], ub[1])
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// utf16Units are the code units of r (the second is 0 for one unit).
func utf16Units(r rune) [2]rune {
	if r < 0x10000 {
		return [2]rune{r, 0}
	}
	r -= 0x10000
	return [2]rune{0xD800 + r>>10, 0xDC00 + r&0x3FF}
}

func typeRank(v any) int {
	switch t := v.(type) {
	case nil:
		return 0
	case bool:
		if t {
			return 2
		}
		return 1
	case float64:
		return 3
	case string:
		return 4
	}
	return 5
}

// CompareValues orders sort values across types as production does: null
// < false < true < numbers < strings < objects (all objects equal).
func CompareValues(a, b any) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		return cmp.Compare(int64(ra), int64(rb))
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	case string:
		return compareUTF16(x, b.(string))
	}
	return 0
}

// comparePriorities orders priorities: none, numbers, strings.
func comparePriorities(a, b any) int {
	rank := func(p any) int {
		switch p.(type) {
		case nil:
			return 0
		case float64:
			return 1
		}
		return 2
	}
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return cmp.Compare(int64(ra), int64(rb))
	}
	return CompareValues(a, b)
}

// sortByPriority sorts keys of m in priority order, then key order.
func sortByPriority(m map[string]any, keys []string) {
	sort.Slice(keys, func(i, j int) bool {
		if c := comparePriorities(priorityOf(m[keys[i]]), priorityOf(m[keys[j]])); c != 0 {
			return c < 0
		}
		return CompareKeys(keys[i], keys[j]) < 0
	})
}

// --- hashes ---

func ieee754(f float64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], math.Float64bits(f))
	return fmt.Sprintf("%x", b[:])
}

func priorityHashText(p any) string {
	if f, ok := p.(float64); ok {
		return "number:" + ieee754(f)
	}
	return "string:" + fmt.Sprint(p)
}

func sha1b64(s string) string {
	h := sha1.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}

// Hash is the SDK's hash of a stored value (the "h" of listens and of
// compare-and-set puts): "" for null, else base64 SHA-1 of the value's
// canonical text.
func Hash(v any) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	if p := priorityOf(v); p != nil {
		b.WriteString("priority:" + priorityHashText(p) + ":")
	}
	m, node := isNode(v)
	if !node {
		switch l := leafOf(v).(type) {
		case float64:
			b.WriteString("number:" + ieee754(l))
		case string:
			b.WriteString("string:" + l)
		case bool:
			b.WriteString("boolean:" + strconv.FormatBool(l))
		}
		return sha1b64(b.String())
	}
	keys := childKeys(m)
	sortByPriority(m, keys)
	for _, k := range keys {
		if h := Hash(m[k]); h != "" {
			b.WriteString(":" + k + ":" + h)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return sha1b64(b.String())
}

// ETag is the REST entity tag of a value: its hash, or "null_etag" for
// an absent value.
func ETag(v any) string {
	if h := Hash(v); h != "" {
		return h
	}
	return "null_etag"
}
