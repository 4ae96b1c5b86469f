package authserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/internal/jsonstr"
)

// enums are the allowed values of the Identity Toolkit enum fields, in the
// API's order: a number is accepted as an index into the list, as the
// emulator's validator does.
var enums = map[string][]string{
	"requestType":       {"OOB_REQ_TYPE_UNSPECIFIED", "PASSWORD_RESET", "OLD_EMAIL_AGREE", "NEW_EMAIL_ACCEPT", "VERIFY_EMAIL", "RECOVER_EMAIL", "EMAIL_SIGNIN", "VERIFY_AND_CHANGE_EMAIL", "REVERT_SECOND_FACTOR_ADDITION"},
	"clientType":        {"CLIENT_TYPE_UNSPECIFIED", "CLIENT_TYPE_WEB", "CLIENT_TYPE_ANDROID", "CLIENT_TYPE_IOS"},
	"recaptchaVersion":  {"RECAPTCHA_VERSION_UNSPECIFIED", "RECAPTCHA_ENTERPRISE"},
	"deleteAttribute":   {"USER_ATTRIBUTE_NAME_UNSPECIFIED", "EMAIL", "DISPLAY_NAME", "PROVIDER", "PHOTO_URL", "PASSWORD", "RAW_USER_INFO"},
	"order":             {"ORDER_UNSPECIFIED", "ASC", "DESC"},
	"sortBy":            {"SORT_BY_FIELD_UNSPECIFIED", "USER_ID", "NAME", "CREATED_AT", "LAST_LOGIN_AT", "USER_EMAIL"},
	"passwordHashOrder": {"UNSPECIFIED_ORDER", "SALT_AND_PASSWORD", "PASSWORD_AND_SALT"},
}

// parseError is the emulator's answer to a body that is not JSON.
func parseError(msg string) *auth.Error {
	m := "Invalid JSON payload received. " + msg
	return &auth.Error{HTTP: 400, Status: "INVALID_ARGUMENT", Message: m,
		Details: []auth.ErrorDetail{{Message: m, Domain: "global", Reason: "parseError"}}}
}

// DecodeBody reads a request body into dst (a pointer to one of the
// engine's request structs), checking JSON types the way the emulator's
// OpenAPI validator does: strings accept numbers (converted), enums accept
// their index, null is a type error, unknown fields are ignored, snake_case
// keys are read as camelCase. Form-encoded bodies are accepted when form is
// true (securetoken). It returns the body's top-level members that dst's
// struct does not declare (targetProjectId; every member for a
// &struct{}{}), nil when there are none.
//
// A JSON object or form body is decoded in one pass over its text by the
// table of dst's type (shapeOf), with no intermediate tree; of several
// type errors it reports the first in the order of sorted keys, as the
// validator walks them. Anything else (a body that is not a JSON object,
// invalid JSON) takes decodeReflective, which the one-pass decoder is
// compared against (FuzzDecodeBodyMatchesReflective).
func DecodeBody(contentType string, body []byte, form bool, dst any) (map[string]any, error) {
	return decodeBody(contentType, body, form, dst, "")
}

// decodeBody is DecodeBody; with keep set, the members a JSON object's
// one-pass decoding returns are keep alone (op reads targetProjectId and
// nothing else), so that a member such as returnSecureToken costs no map.
func decodeBody(contentType string, body []byte, form bool, dst any, keep string) (map[string]any, error) {
	mt := mediaType(contentType)
	rv := reflect.ValueOf(dst).Elem()
	sh := shapeOf(rv.Type())
	d := decoder{top: true, keep: keep}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return nil, nil
	case mt == "application/x-www-form-urlencoded" && form:
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, parseError(err.Error())
		}
		ms := make([]member, 0, len(q))
		for k, v := range q {
			ms = append(ms, member{key: camel(k), val: jvalue{str: v[0], form: true}})
		}
		if err := d.members(ms, sh, rv, ""); err != nil {
			return nil, err
		}
	case mt == "application/json" || mt == "":
		i := jsonstr.SkipSpace(body, 0)
		if body[i] != '{' || !jsonstr.Valid(body) {
			root, err := decodeJSON(body)
			if err != nil {
				return nil, err
			}
			return decodeReflective(root, dst)
		}
		var small [16]member
		if err := d.members(objectMembers(body, i, sh, small[:0]), sh, rv, ""); err != nil {
			return nil, err
		}
	default:
		m := "Invalid content-type: " + contentType
		return nil, &auth.Error{HTTP: 400, Message: m, Details: []auth.ErrorDetail{{Message: m, Reason: "unknown"}}}
	}
	if d.unassignable {
		return nil, invalid("", "must be object") // what decodeReflective answers; never a 500
	}
	return d.extra, nil
}

// mediaType is mime.ParseMediaType's media type, without parsing (and
// the map of parameters) for the Content-Type every SDK sends.
func mediaType(contentType string) string {
	if contentType == "application/json" {
		return contentType
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// decodeReflective checks a parsed body (decodeJSON's tree) against dst's
// type and stores it, through reflection on both: the validator's rules
// written once over a generic tree. It returns the members dst does not
// declare.
func decodeReflective(root any, dst any) (map[string]any, error) {
	root = camelKeys(root)
	t := reflect.TypeOf(dst).Elem()
	fixed, err := check(root, t, "", "")
	if err != nil {
		return nil, err
	}
	if err := assign(reflect.ValueOf(dst).Elem(), fixed); err != nil {
		return nil, invalid("", "must be object") // a value check lets through that the field cannot hold; never a 500
	}
	sh := shapeOf(t)
	var extra map[string]any
	for k, v := range fixed.(map[string]any) {
		if _, ok := sh.fields[k]; !ok {
			if extra == nil {
				extra = map[string]any{}
			}
			extra[k] = v
		}
	}
	return extra, nil
}

// decodeJSON parses a JSON body with its numbers kept exact (json.Number).
// A top-level object, every request's shape, is split into its members by
// json.Unmarshal, which scans the body in place; string members are decoded
// the same way and only the others go through a json.Decoder, which buffers
// what it reads. So a huge string member (a 20 MiB password) costs a copy
// or two of itself instead of a decoder buffer doubling up to its size.
func decodeJSON(body []byte) (any, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.HasSuffix(se.Error(), "after top-level value") {
			return nil, parseError("Unexpected non-whitespace character after JSON")
		}
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, parseError(jsonErrorText(err))
		}
		return decodeJSONValue(body) // an array or a scalar
	}
	if members == nil { // the body was null
		return nil, parseError(fmt.Sprintf("Unexpected token, %q is not valid JSON", strings.TrimSpace(string(body))))
	}
	out := make(map[string]any, len(members))
	for k, raw := range members {
		// The members are valid JSON (json.Unmarshal checked the body):
		// a string without escapes or bytes to replace is its bytes, and
		// the literals need no decoder.
		switch string(raw) {
		case "true":
			out[k] = true
			continue
		case "false":
			out[k] = false
			continue
		case "null":
			out[k] = nil
			continue
		}
		if len(raw) > 0 && raw[0] == '"' {
			if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
				out[k] = string(in)
				continue
			}
			var str string
			if err := json.Unmarshal(raw, &str); err != nil {
				return nil, parseError(jsonErrorText(err))
			}
			out[k] = str
			continue
		}
		v, err := decodeNumbers(raw)
		if err != nil {
			return nil, parseError(jsonErrorText(err))
		}
		out[k] = v
	}
	return out, nil
}

// decodeJSONValue parses a body that is not an object: an array is
// decoded (the validator then names the type error), a scalar is refused
// as the emulator refuses it.
func decodeJSONValue(body []byte) (any, error) {
	v, err := decodeNumbers(body)
	if err != nil {
		return nil, parseError(jsonErrorText(err))
	}
	if _, ok := v.([]any); !ok {
		return nil, parseError(fmt.Sprintf("Unexpected token, %q is not valid JSON", strings.TrimSpace(string(body))))
	}
	return v, nil
}

// decodeNumbers decodes one JSON value with exact numbers.
func decodeNumbers(raw []byte) (any, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func jsonErrorText(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("%s at position %d", se.Error(), se.Offset)
	}
	return err.Error()
}

func invalid(path, what string) *auth.Error {
	if path != "" {
		what = path + " " + what
	}
	return auth.InvalidArgument("Invalid JSON payload received. " + what)
}

// camelKeys converts snake_case keys to camelCase, recursively.
func camelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[camel(k)] = camelKeys(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = camelKeys(e)
		}
	}
	return v
}

func camel(k string) string {
	if !strings.ContainsAny(k, "_-") {
		return k
	}
	b := make([]byte, 0, len(k))
	upper := false // a separator came after the key's first letters
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= utf8.RuneSelf:
			return camelUnicode(k)
		case c == '_' || c == '-':
			upper = len(b) > 0
			continue
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		upper = false
		b = append(b, c)
	}
	return string(b)
}

// camelUnicode is camel for keys beyond ASCII: each part lower-cased,
// then the first byte of each but the first upper-cased.
func camelUnicode(k string) string {
	parts := strings.FieldsFunc(k, func(r rune) bool { return r == '_' || r == '-' })
	for i, p := range parts {
		p = strings.ToLower(p)
		if i > 0 && p != "" {
			p = strings.ToUpper(p[:1]) + p[1:]
		}
		parts[i] = p
	}
	return strings.Join(parts, "")
}

var (
	anyType = reflect.TypeOf((*any)(nil)).Elem()
)

// check validates v against Go type t and returns v with the emulator's
// coercions applied. path is the JSON pointer so far; name the field name
// (for enums).
func check(v any, t reflect.Type, path, name string) (any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == anyType {
		return v, nil
	}
	switch t.Kind() {
	case reflect.String:
		switch x := v.(type) {
		case string:
			if allowed, ok := enums[name]; ok && !slices.Contains(allowed, x) {
				return nil, invalid(path, "must be equal to one of the allowed values")
			}
			return x, nil
		case json.Number:
			if allowed, ok := enums[name]; ok {
				i, err := strconv.Atoi(x.String())
				if err != nil || i < 0 || i >= len(allowed) {
					return nil, invalid(path, "must be equal to one of the allowed values")
				}
				return allowed[i], nil
			}
			return x.String(), nil
		}
		if _, ok := enums[name]; ok && v != nil {
			return nil, invalid(path, "must be equal to one of the allowed values")
		}
		return nil, invalid(path, "must be string")
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return nil, invalid(path, "must be boolean")
		}
		return v, nil
	case reflect.Int, reflect.Int64, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return nil, invalid(path, "must be number")
		}
		return v, nil
	case reflect.Slice:
		if v == nil {
			// Production (proto3 JSON) reads a null list as empty; admin-go
			// clears second factors with "mfa":{"enrollments":null}.
			return nil, nil
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, invalid(path, "must be array")
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			f, err := check(e, t.Elem(), path+"/"+strconv.Itoa(i), name)
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
		return out, nil
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, invalid(path, "must be object")
		}
		return m, nil
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, invalid(path, "must be object")
		}
		fields := map[string]reflect.StructField{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if n, ok := jsonName(f); ok {
				fields[n] = f
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make(map[string]any, len(m))
		for _, k := range keys {
			f, ok := fields[k]
			if !ok {
				out[k] = m[k] // unknown: kept for the caller, ignored by the struct
				continue
			}
			c, err := check(m[k], f.Type, path+"/"+k, k)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	}
	return v, nil
}

// jsonName is the member name a request struct's field is decoded from:
// its json tag's name; ok is false for a field a body cannot set
// (embedded, unexported, untagged or tagged "-").
func jsonName(f reflect.StructField) (name string, ok bool) {
	if f.Anonymous || !f.IsExported() {
		return "", false
	}
	n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return n, n != "" && n != "-"
}

// assign stores a checked JSON value into v without re-encoding it (a
// body's strings are shared, not copied: a 20 MiB field costs one copy).
func assign(v reflect.Value, x any) error {
	if x == nil {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return assign(v.Elem(), x)
	}
	if v.Type() == anyType {
		v.Set(reflect.ValueOf(x))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		s, ok := x.(string)
		if !ok {
			return fmt.Errorf("want string")
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return fmt.Errorf("want bool")
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, ok := x.(json.Number)
		if !ok {
			return fmt.Errorf("want number")
		}
		f, err := n.Float64()
		if err != nil {
			return err
		}
		v.SetInt(int64(f))
	case reflect.Float64:
		n, ok := x.(json.Number)
		if !ok {
			return fmt.Errorf("want number")
		}
		f, err := n.Float64()
		if err != nil {
			return err
		}
		v.SetFloat(f)
	case reflect.Slice:
		arr, ok := x.([]any)
		if !ok {
			return fmt.Errorf("want array")
		}
		out := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, e := range arr {
			if err := assign(out.Index(i), e); err != nil {
				return err
			}
		}
		v.Set(out)
	case reflect.Map:
		m, ok := x.(map[string]any)
		if !ok || v.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("want object")
		}
		out := reflect.MakeMapWithSize(v.Type(), len(m))
		for k, e := range m {
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := assign(ev, e); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), ev)
		}
		v.Set(out)
	case reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("want object")
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous || !f.IsExported() {
				continue
			}
			n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if n == "" || n == "-" {
				continue
			}
			if e, ok := m[n]; ok {
				if err := assign(v.Field(i), e); err != nil {
					return err
				}
			}
		}
	default:
		return fmt.Errorf("unsupported kind %s", v.Kind())
	}
	return nil
}

// bodyString returns a string-valued field of a decoded body.
func bodyString(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}
