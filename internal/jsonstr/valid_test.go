package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// validCases are texts at the edges of the grammar.
var validCases = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`, `1e07`, `-01`, `2.0e+10`,
	`true`, `tru`, `truex`, `null`, `nul`, `false `, ` false`, `"`, `""`, `"\"`, `"\\"`, `"\/"`, `"\x"`,
	`"\u12"`, `"\u12g4"`, `"\uABcd"`, "\"\x1f\"", "\"\x7f\xff\xc3\"", "\"\t\"", `[]`, `[`, `]`, `[,]`,
	`[1,]`, `[1 , 2]`, `{}`, `{ }`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 , "b" : [true]}`, `{1:2}`,
	`{"a":1}}`, `[1]]`, `[{]}`, `{"a":[}`, "\r\n\t[ ]\n", `1 2`, `"a" "b"`, `{"a":{"b":{"c":[[],{}]}}}`,
	`[-]`, `[1e5,-2.5E-3,0.0]`, `{"a":tru}`, `nulll`, "[\x00]", `{"":""}`,
}

// TestValidMatchesEncodingJSON on the grammar's edges, on random texts
// of its bytes, and at the nesting bound.
func TestValidMatchesEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
	for _, s := range validCases {
		check(s)
	}
	r := rand.New(rand.NewPCG(27, 11))
	const alphabet = `{}[],:" \-01.eE+tru\fn` + "\x01\xff"
	for range 200000 {
		b := make([]byte, r.IntN(12))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		check(string(b))
	}
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		check(strings.Repeat("[", n) + strings.Repeat("]", n))
		check(strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1))
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range validCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"docs":[`)
	for i := range 20000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"name":"projects/p/databases/(default)/documents/load/d0000001","n":12345,"s":"some text","x":[1.5,true,null]}`)
	}
	buf.WriteString("]}")
	data := buf.Bytes()
	for _, v := range []struct {
		name  string
		valid func([]byte) bool
	}{{"jsonstr", Valid}, {"encoding-json", json.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !v.valid(data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
