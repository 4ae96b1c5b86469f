package capture

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/prefault"
)

// wholeCases are session files, each whole or not.
var wholeCases = []struct {
	name  string
	data  string
	whole bool
}{
	{"compact", `{"schema":"pyric.verify.fixture.v1","events":[],"services":{}}`, true},
	{"compact, lines", "{\"schema\":\"pyric.verify.fixture.v1\",\"events\":[],\"services\":{}}\n{\"k\":1}\n[2]\n", true},
	{"compact, torn last line", "{\"schema\":\"pyric.verify.fixture.v1\",\"events\":[],\"services\":{}}\n{\"k\":1}\n{\"k\":", true},
	{"compact, trailing spaces", "{\"schema\":\"pyric.verify.fixture.v1\",\"events\":[]}  \n{\"k\":1}\n", true},
	{"indented", "{\n \"schema\": \"pyric.verify.fixture.v1\",\n \"events\": []\n}\n", true},
	{"schema not first", `{"events":[],"schema":"pyric.verify.fixture.v1"}`, true},
	{"compact, cut", "{\"schema\":\"pyric.verify.fixture.v1\",\"events\":[],\"servi\n{\"k\":1}\n", false},
	{"compact, garbled", "{\"schema\":\"pyric.verify.fixture.v1\",\"events\":[\x00],\"services\":{}}", false},
	{"compact, damaged line", "{\"schema\":\"pyric.verify.fixture.v1\",\"events\":[]}\n{\"k\":1}\n{\"k\"::2}\n{}\n", false},
	{"other schema", `{"schema":"pyric.verify.fixture.v0","events":[]}`, false},
	{"not an object", "[1]", false},
	{"empty", "", false},
}

// TestCheckWholeCompact: a running session's file (compact, lines
// appended) is checked in one pass over its text, and the answer is the
// one reading its schema through a decoder gives, on whole files and
// damaged ones alike; a damaged file's error says where, as before.
func TestCheckWholeCompact(t *testing.T) {
	for _, c := range wholeCases {
		got, decoded := checkWhole([]byte(c.data)), checkWholeDecoded([]byte(c.data))
		if (got == nil) != c.whole || (decoded == nil) != c.whole {
			t.Errorf("%s: checkWhole %v, checkWholeDecoded %v; want whole %v", c.name, got, decoded, c.whole)
		}
		if got != nil && decoded != nil && got.Error() != decoded.Error() {
			t.Errorf("%s: error %q, want %q", c.name, got, decoded)
		}
	}
	if _, ok := compactBase([]byte(wholeCases[1].data)); !ok {
		t.Error("a compact session file is not checked in one pass")
	}
}

// bigSession is a compact session file of n documents.
func bigSession(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema":"pyric.verify.fixture.v1","createdAt":"2026-12-07T12:00:00Z","events":[],"services":{"firestore":{"data":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"load/d%07d":{"n":%d,"s":"some text"}`, i, i)
	}
	b.WriteString("}}}}\n")
	b.WriteString(strings.Repeat(`{"set":["firestore","load/x"],"value":{"n":1}}`+"\n", 100))
	return b.Bytes()
}

func BenchmarkCheckWhole(b *testing.B) {
	data := bigSession(100_000)
	for _, f := range []struct {
		name  string
		check func([]byte) error
	}{{"compact", checkWhole}, {"decoded", checkWholeDecoded}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := f.check(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCheckMappedCutShort: a session file another process cuts short
// while the start checks its mapping is taken as unreadable (not damaged,
// not kept aside), and does not crash the start.
func TestCheckMappedCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "last-session.json")
	if err := os.WriteFile(path, bigSession(20_000), 0o644); err != nil {
		t.Fatal(err)
	}
	data, release, err := prefault.MapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := checkMapped(data); err != nil {
		t.Fatalf("a whole session: %v", err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	faulted := func() (fault bool) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { fault = recover() != nil }()
		readByte = data[len(data)-1]
		return false
	}()
	if !faulted {
		t.Fatal("reading the mapping of a file cut short does not fault: the case is not exercised")
	}
	if err := checkMapped(data); err != nil {
		t.Errorf("a session cut short while checked: %v, want it taken as unreadable", err)
	}
}

// readByte keeps the test's read of a mapping from being optimized away.
var readByte byte
