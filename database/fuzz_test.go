package database_test

import (
	"net/url"
	"testing"

	"github.com/pyric/pyric/database"
)

// FuzzRESTQuery parses arbitrary REST query strings: a query or a precise
// error, never a panic; a parsed query runs against a small tree.
func FuzzRESTQuery(f *testing.F) {
	for _, s := range []string{
		`orderBy="n"&limitToFirst=2`, `orderBy="$key"&startAt="a"&endAt="c"`, `orderBy="$value"&equalTo=3`,
		`orderBy="$priority"&limitToLast=1`, `orderBy="a/b"&startAfter=1&endBefore=5`, `limitToFirst=1`,
		`orderBy=n`, `orderBy="$key"&startAt=1`, `orderBy="n"&limitToFirst=0`, `orderBy="n"&equalTo={"a":1}`,
	} {
		f.Add(s)
	}
	d, err := database.New(envForFuzz(), database.Options{})
	if err != nil {
		f.Fatal(err)
	}
	set := func(p, v string) {
		val, _ := database.DecodeJSON([]byte(v))
		if _, err := d.Set(admin, ns, p, val, database.WriteOptions{}); err != nil {
			f.Fatal(err)
		}
	}
	set("t", `{"a":{"n":1,".priority":2},"b":{"n":"x"},"c":{"n":{"d":1}},"1":true,"2":{"a":{"b":3}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, ok, err := database.ParseRESTQuery(v)
		if err != nil || !ok {
			return
		}
		if _, err := d.Get(admin, ns, "t", &q, false); err != nil {
			t.Fatalf("query %v: %v", q, err)
		}
	})
}

// FuzzNormalize stores arbitrary JSON: stored or a precise error, and a
// stored value reads back unchanged.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{`1`, `[1,null,3]`, `{"a":{".sv":"timestamp"}}`, `{".value":1,".priority":"p"}`, `{"a.b":1}`, `{"x":{".sv":{"increment":1}}}`, `{}`} {
		f.Add(s)
	}
	d, err := database.New(envForFuzz(), database.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := database.DecodeJSON([]byte(s))
		if err != nil {
			return
		}
		stored, err := d.Set(admin, ns, "f", v, database.WriteOptions{})
		if err != nil {
			return
		}
		r, err := d.Get(admin, ns, "f", nil, false)
		if err != nil || !database.Equal(r.Value, stored) {
			t.Fatalf("read %v (%v), stored %v", r.Value, err, stored)
		}
		_ = database.Plain(stored)
		_ = database.Hash(stored)
	})
}
