package authserver

import (
	"encoding/json"
	"mime"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/internal/jsonstr"
)

// decodeBodyReference is DecodeBody as it was written before its one-pass
// decoder: the whole body parsed into a tree, then checked and stored by
// reflection (decodeReflective). The one-pass decoder must agree with it
// on every body.
func decodeBodyReference(contentType string, body []byte, form bool, dst any) (map[string]any, error) {
	var root any
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case len(strings.TrimSpace(string(body))) == 0:
		root = map[string]any{}
	case mt == "application/x-www-form-urlencoded" && form:
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, parseError(err.Error())
		}
		m := map[string]any{}
		for k, v := range q {
			m[k] = v[0]
		}
		root = m
	case mt == "application/json" || mt == "":
		var err error
		if root, err = decodeJSON(body); err != nil {
			return nil, err
		}
	default:
		m := "Invalid content-type: " + contentType
		return nil, &auth.Error{HTTP: 400, Message: m, Details: []auth.ErrorDetail{{Message: m, Reason: "unknown"}}}
	}
	return decodeReflective(root, dst)
}

type nested struct {
	Name  string    `json:"name,omitempty"`
	Count int       `json:"count,omitempty"`
	Tags  []string  `json:"tags,omitempty"`
	Next  *nested   `json:"next,omitempty"`
	Kids  []*nested `json:"kids,omitempty"`
}

// kinds has a field of every kind a request struct may declare, and some
// none does (float32, int32, uint8 lists), which only the reflective
// rules decide.
type kinds struct {
	S      string            `json:"s,omitempty"`
	P      *string           `json:"p,omitempty"`
	B      *bool             `json:"b,omitempty"`
	I      int               `json:"i,omitempty"`
	I64    int64             `json:"i64,omitempty"`
	F      float64           `json:"f,omitempty"`
	F32    float32           `json:"f32,omitempty"`
	I32    int32             `json:"i32,omitempty"`
	Bytes  []byte            `json:"bytes,omitempty"`
	Types  []string          `json:"requestType,omitempty"`
	Order  string            `json:"order,omitempty"`
	Grid   [][]string        `json:"grid,omitempty"`
	Attrs  map[string]string `json:"attrs,omitempty"`
	Any    any               `json:"any,omitempty"`
	Anys   []any             `json:"anys,omitempty"`
	Nested nested            `json:"nested,omitempty"`
	Ptr    *nested           `json:"ptr,omitempty"`
	List   []nested          `json:"list,omitempty"`
	Snake  string            `json:"snakeCase,omitempty"`
	Skip   string            `json:"-"`
	nested
}

// targets are the types the differential checks decode into.
func targets() []func() any {
	return []func() any{
		func() any { return &kinds{} },
		func() any { return &sample{} },
		func() any { return &struct{}{} },
		func() any { return &auth.SignUpRequest{} },
		func() any { return &auth.LookupRequest{} },
		func() any { return &auth.UpdateRequest{} },
		func() any { return &auth.BatchCreateRequest{} },
		func() any { return &auth.SendOOBCodeRequest{} },
		func() any { return &auth.GrantTokenRequest{} },
	}
}

// camelCollides says whether two keys of one object of v read as the same
// camelCase key: which of them the reference keeps depends on a map's
// order.
func camelCollides(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		seen := map[string]bool{}
		for k, e := range x {
			if seen[camel(k)] || camelCollides(e) {
				return true
			}
			seen[camel(k)] = true
		}
	case []any:
		for _, e := range x {
			if camelCollides(e) {
				return true
			}
		}
	}
	return false
}

// compareDecoders decodes body into each target with DecodeBody and the
// reference and fails on any difference: the error (all of it), the
// struct, the members returned.
func compareDecoders(t *testing.T, ctype, body string) {
	t.Helper()
	if ctype == "application/x-www-form-urlencoded" {
		if q, err := url.ParseQuery(body); err == nil {
			seen := map[string]bool{}
			for k := range q {
				if seen[camel(k)] {
					return
				}
				seen[camel(k)] = true
			}
		}
	} else {
		var tree any
		if json.Unmarshal([]byte(body), &tree) == nil && camelCollides(tree) {
			return
		}
	}
	for _, mk := range targets() {
		got, want := mk(), mk()
		gx, gerr := DecodeBody(ctype, []byte(body), true, got)
		wx, werr := decodeBodyReference(ctype, []byte(body), true, want)
		if !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("%T %s %q: error %v, reference %v", got, ctype, body, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%T %s %q: decoded %+v, reference %+v", got, ctype, body, got, want)
		}
		if len(gx) != 0 || len(wx) != 0 {
			if !reflect.DeepEqual(gx, wx) {
				t.Fatalf("%T %s %q: members %#v, reference %#v", got, ctype, body, gx, wx)
			}
		}
	}
}

var decodeSeeds = []string{
	``, ` `, `{}`, `[]`, `[1]`, `null`, `"s"`, `{bad`, `{"a":1} x`, `{} }`,
	`{"s":"x","p":"y","b":true,"i":1.9,"i64":-3,"f":2.5e3}`, `{"b":false,"nested":{"count":-0}}`,
	`{"s":12,"p":null}`, `{"s":null}`, `{"s":true}`, `{"b":"true"}`, `{"b":null}`, `{"i":"1"}`, `{"i":1e400}`, `{"f":-1e400}`, `{"i":1e-400}`,
	`{"f32":1.5}`, `{"i32":3}`, `{"bytes":[1,2]}`, `{"bytes":"AQI="}`,
	`{"requestType":["VERIFY_EMAIL",1]}`, `{"requestType":[9]}`, `{"requestType":"VERIFY_EMAIL"}`, `{"requestType":[true]}`, `{"requestType":[null]}`,
	`{"order":1}`, `{"order":"DESC"}`, `{"order":"desc"}`, `{"order":1.0}`, `{"order":-1}`, `{"order":{}}`, `{"order":null}`,
	`{"grid":[["a"],["b",1],null]}`, `{"grid":[["a"],[{}]]}`, `{"grid":[1]}`,
	`{"attrs":{"a":"b","c_d":"e"}}`, `{"attrs":{"a":1}}`, `{"attrs":[]}`, `{"attrs":null}`,
	`{"any":{"x_y":[{"z_w":1}]}}`, `{"any":null}`, `{"anys":[1,"a",null,{"a_b":2}]}`,
	`{"nested":{"name":"n","count":2,"tags":["t"],"next":{"name":1}}}`, `{"nested":{"kids":[{"name":"a"},{"count":"x"}]}}`,
	`{"ptr":{}}`, `{"ptr":null}`, `{"list":[{},{"tags":null},{"tags":[1,true]}]}`, `{"list":{}}`,
	`{"snake_case":"v"}`, `{"SNAKE_CASE":"v"}`, `{"snake-case":"v"}`, `{"name":"embedded"}`,
	`{"s":1,"b":1,"i":true,"nested":1}`, `{"z":1,"b":"x","a":2,"i":"q"}`, `{"s":"a","s":2}`, `{"s":2,"s":"a"}`,
	`{"email":"a@b.c","password":"pw","returnSecureToken":true,"targetProjectId":"p2","x_y":{"a_b":1}}`,
	`{"localId":["a","b"],"email":null}`, `{"localId":"a"}`, `{"users":[{"localId":"u","providerUserInfo":[{"providerId":5}]}]}`,
	`{"requestType":"PASSWORD_RESET","email":"x@y.z","canHandleCodeInApp":"yes"}`,
	"{\"s\":\"caf\\u00e9 \\\"q\\\"\",\"\\u0073\":\"escaped key\"}", "{\"s\":\"\xff\xfe\"}", `{ "s" : "spaced" , "i" : 1 }`,
	"{\"s\":\"a\"}\n", "\t{\"s\":\"a\"}", "\v{}", `{"a":{"b":[{"c":[[[]]]}]}}`,
}

func TestDecodeBodyMatchesReflective(t *testing.T) {
	for _, body := range decodeSeeds {
		compareDecoders(t, "application/json", body)
		compareDecoders(t, "", body)
	}
	for _, body := range []string{"", "grant_type=refresh_token&refresh_token=abc", "s=1&b=true&i=2&requestType=1&order=ASC",
		"order=up", "nested=x", "localId=a&email=b", "s=%zz", "grant_type=a&grant_type=b", "returnSecureToken=true"} {
		compareDecoders(t, "application/x-www-form-urlencoded", body)
	}
	compareDecoders(t, "text/plain", `{}`)
}

func FuzzDecodeBodyMatchesReflective(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(false, s)
	}
	f.Add(true, "grant_type=refresh_token&refresh_token=abc&order=2")
	f.Fuzz(func(t *testing.T, form bool, body string) {
		ctype := "application/json"
		if form {
			ctype = "application/x-www-form-urlencoded"
		}
		compareDecoders(t, ctype, body)
	})
}

// TestDecodeBodyErrors pins the validator's answers the one-pass decoder
// must give: the first error in sorted key order, its JSON pointer, the
// enum rules, and the members returned.
func TestDecodeBodyErrors(t *testing.T) {
	tests := []struct {
		body, ctype string
		msg         string
		check       func(k *kinds, extra map[string]any) bool
	}{
		{`{"z":1,"s":true,"b":"x"}`, "", "Invalid JSON payload received. /b must be boolean", nil},
		{`{"nested":{"next":{"tags":["a",2,{}]}}}`, "", "Invalid JSON payload received. /nested/next/tags/2 must be string", nil},
		{`{"list":[{},{"kids":[{"count":"x"}]}]}`, "", "Invalid JSON payload received. /list/1/kids/0/count must be number", nil},
		{`{"order":3}`, "", "Invalid JSON payload received. /order must be equal to one of the allowed values", nil},
		{`{"order":null}`, "", "Invalid JSON payload received. /order must be string", nil},
		{`{"requestType":[1,"NOPE"]}`, "", "Invalid JSON payload received. /requestType/1 must be equal to one of the allowed values", nil},
		{`{"i":1e400}`, "", "Invalid JSON payload received. must be object", nil},
		{`{"attrs":{"a":1}}`, "", "Invalid JSON payload received. must be object", nil},
		{`[{}]`, "", "Invalid JSON payload received. must be object", nil},
		{"i=1", "application/x-www-form-urlencoded", "Invalid JSON payload received. /i must be number", nil},
		{`{"order":2,"requestType":[4],"snake_case":"v","s":7,"grid":null,"target_project_id":"p"}`, "", "", func(k *kinds, x map[string]any) bool {
			return k.Order == "DESC" && reflect.DeepEqual(k.Types, []string{"VERIFY_EMAIL"}) && k.Snake == "v" && k.S == "7" && k.Grid == nil &&
				reflect.DeepEqual(x, map[string]any{"targetProjectId": "p"})
		}},
		{`{"s":"first","s":"last","p":"x","ptr":{"tags":[]}}`, "", "", func(k *kinds, x map[string]any) bool {
			return k.S == "last" && *k.P == "x" && k.Ptr != nil && k.Ptr.Tags != nil && len(k.Ptr.Tags) == 0 && x == nil
		}},
	}
	for _, tt := range tests {
		var k kinds
		ctype := tt.ctype
		if ctype == "" {
			ctype = "application/json"
		}
		extra, err := DecodeBody(ctype, []byte(tt.body), true, &k)
		if tt.msg != "" {
			if err == nil || err.Error() != tt.msg && err.(*auth.Error).Message != tt.msg {
				t.Errorf("%s: error %v, want %q", tt.body, err, tt.msg)
			}
			continue
		}
		if err != nil || !tt.check(&k, extra) {
			t.Errorf("%s: %+v %v %v", tt.body, k, extra, err)
		}
	}
}

// BenchmarkDecodeBody compares the one-pass decoder with the reflective
// reference on the bodies of the calls every app makes most.
func BenchmarkDecodeBody(b *testing.B) {
	bodies := []struct {
		name string
		body string
		dst  func() any
	}{
		{"signUp", `{"email":"u1765-12@bench.example","password":"secret-1","returnSecureToken":true}`, func() any { return &auth.SignUpRequest{} }},
		{"signIn", `{"email":"u1765-12@bench.example","password":"secret-1","returnSecureToken":true}`, func() any { return &auth.SignInWithPasswordRequest{} }},
		{"refresh", `{"grant_type":"refresh_token","refresh_token":"eyJfQXV0aEVtdWxhdG9yUmVmcmVzaFRva2VuIjoiRE8gTk9UIE1PRElGWSJ9"}`, func() any { return &auth.GrantTokenRequest{} }},
		{"lookup", `{"localId":["2suEhdyP1mOaExUrl2aoFYBcIAHX"]}`, func() any { return &auth.LookupRequest{} }},
	}
	for _, tt := range bodies {
		for _, dec := range []struct {
			name string
			fn   func(string, []byte, bool, any) (map[string]any, error)
		}{{"one-pass", DecodeBody}, {"reflective", decodeBodyReference}} {
			b.Run(tt.name+"/"+dec.name, func(b *testing.B) {
				b.ReportAllocs()
				body := []byte(tt.body)
				for range b.N {
					if _, err := dec.fn("application/json", body, true, tt.dst()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// camelByParts is camel as the emulator's key conversion reads: split at
// '_' and '-', each part lower-cased, the first letter of each but the
// first upper-cased.
func camelByParts(k string) string {
	if !strings.ContainsAny(k, "_-") {
		return k
	}
	return camelUnicode(k)
}

func FuzzCamel(f *testing.F) {
	for _, k := range []string{"grant_type", "refresh_token", "_a__b_", "A_B-C", "x-Y_z", "already", "__", "a_1b", "q_Ünïcode", "ab_\xc3", "Éa_b", "a_éb"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := camel(k), camelByParts(k); got != want {
			t.Fatalf("camel(%q) = %q, want %q", k, got, want)
		}
	})
}

func FuzzQueryValue(f *testing.F) {
	for _, q := range []string{"", "key=k", "a=1&key=k&key=j", "key", "key=", "k%65y=v%20w", "key=%zz&key=ok", "key=a;b&key=c", "&&key=x", "key=a+b", "%zz=1&key=2", "KEY=x"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		want, _ := url.ParseQuery(q)
		if got := queryValue(q, "key"); got != want.Get("key") {
			t.Fatalf("%q: %q, url.ParseQuery's %q", q, got, want.Get("key"))
		}
	})
}

// FuzzMemberKey: a member's key, looked up in a shape's fields (a
// snake_case key put in camelCase on the stack) or not, is
// camel(jsonstr.Unquote(key)), for keys of every kind: escaped, non-ASCII,
// snake_case spellings of the fields.
func FuzzMemberKey(f *testing.F) {
	for _, k := range []string{`"grant_type"`, `"refreshToken"`, `"refresh_token"`, `"REFRESH_TOKEN"`, `"Email"`, `"email"`, `"e\u006dail"`,
		`"_email_"`, `"return-secure-token"`, `"tenant\\Id"`, `"é_mail"`, `"x"`, `""`, `"returnSecureToken"`, `"return_secure_token"`,
		`"returnSecureTokenX"`} {
		f.Add(k)
	}
	shapes := []*shape{nil, shapeOf(reflect.TypeFor[auth.GrantTokenRequest]()), shapeOf(reflect.TypeFor[auth.SignInWithPasswordRequest]())}
	f.Fuzz(func(t *testing.T, key string) {
		b := []byte(key)
		if len(b) < 2 || b[0] != '"' || jsonstr.SkipString(b, 0) != len(b) {
			return // not one JSON string
		}
		want := camel(jsonstr.Unquote(b))
		for _, sh := range shapes {
			if got := memberKey(sh, b); got != want {
				t.Fatalf("memberKey(%s) = %q, want %q", key, got, want)
			}
		}
	})
}

// TestMemberKeyAllocatesNothingKnown: a key the request declares, or one
// of undeclaredKeys, costs no string.
func TestMemberKeyAllocatesNothingKnown(t *testing.T) {
	sh := shapeOf(reflect.TypeFor[auth.SignInWithPasswordRequest]())
	for _, key := range []string{`"email"`, `"returnSecureToken"`, `"return_secure_token"`} {
		b := []byte(key)
		if n := testing.AllocsPerRun(100, func() { _ = memberKey(sh, b) }); n != 0 {
			t.Errorf("memberKey(%s): %v allocations", key, n)
		}
	}
}

// TestDecodeBodyKeep: op's decoding keeps targetProjectId alone of the
// members its request does not declare, the request decoded as
// DecodeBody decodes it.
func TestDecodeBodyKeep(t *testing.T) {
	body := []byte(`{"email":"a@b.c","password":"p","returnSecureToken":true,"targetProjectId":"q","x":{"y_z":1}}`)
	var got, want auth.SignInWithPasswordRequest
	gx, err := decodeBody("application/json", body, false, &got, "targetProjectId")
	if err != nil {
		t.Fatal(err)
	}
	wx, err := DecodeBody("application/json", body, false, &want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gx, map[string]any{"targetProjectId": "q"}) || len(wx) != 3 {
		t.Fatalf("kept %v (%+v), DecodeBody %v (%+v)", gx, got, wx, want)
	}
}
