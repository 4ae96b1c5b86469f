package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/storage"
)

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, "invalid fixture: is empty"},
		{`[]`, "invalid fixture: must be a JSON object"},
		{`{"schema":`, "is not valid JSON"},
		{`{"events":[]}`, `fixture.schema must be "pyric.verify.fixture.v1"`},
		{`{"schema":"pyric.verify.fixture.v2","events":[]}`, `fixture.schema must be`},
		{`{"schema":"pyric.verify.fixture.v1"}`, "fixture.events must be an array"},
		{`{"schema":"pyric.verify.fixture.v1","events":{}}`, "fixture.events must be an array"},
		{`{"schema":"pyric.verify.fixture.v1","events":[1]}`, "fixture.events[0] must be an object"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{}]}`, "fixture.events[0].kind is missing"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"nope"}]}`, `fixture.events[0].kind "nope" is not an event kind`},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"request","method":"get"}]}`, "fixture.events[0].verdict is missing"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"request","method":"get","verdict":"maybe"}]}`, `"maybe" is not a verdict`},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"request","verdict":"allow"}]}`, "fixture.events[0].method is missing"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"commit"}]}`, "fixture.events[0].path is missing"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"invocation","outcome":"ok"}]}`, "fixture.events[0].function is missing on an invocation event"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"commit","path":"a/b","after":3}]}`, "fixture.events[0].after must be an object or null"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"request","method":"get","verdict":"allow","identity":{"lens":"user"}}]}`, "fixture.events[0].identity.uid is missing"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"seq":2,"kind":"boundary"},{"seq":2,"kind":"boundary"}]}`, "fixture.events[1].seq must increase"},
		{`{"schema":"pyric.verify.fixture.v1","events":[],"services":[]}`, "fixture.services must be an object"},
		{`{"schema":"pyric.verify.fixture.v1","events":[],"services":{"firestore":{"rules":{"format":"storage.rules"}}}}`, `fixture.services.firestore.rules.format must be "firestore.rules"`},
		{`{"schema":"pyric.verify.fixture.v1","events":[],"services":{"database":{"rules":{"format":"database.rules.json","source":"{}"}}}}`, `fixture.services.database.rules.format must be "rtdb.rules.json"`},
		{`{"schema":"pyric.verify.fixture.v1","events":[],"services":{"storage":{"rules":{"format":"firestore.rules"}}}}`, `fixture.services.storage.rules.format must be "storage.rules"`},
		{`{"schema":"pyric.verify.fixture.v1","events":[],"services":{"firestore":{"state":{"documents":{"a":{}}}}}}`, `key "a" is not a document path`},
		{`{"schema":"pyric.verify.fixture.v1","events":[],"services":{"firestore":{"state":{"documents":[]}}}}`, "fixture.services.firestore.state must be"},
		{`{"schema":"pyric.verify.fixture.v1","events":[],"description":5}`, "fixture.description must be a string"},
		{`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"commit","service":"firestore","path":"a/b","before":[1]}]}`, "fixture.events[0].before must be an object or null"},
	}
	for _, c := range cases {
		_, err := decode([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("decode(%s) = %v, want %q", c.in, err, c.want)
		}
	}
	// A Realtime Database commit writes a location, whose value may be
	// any JSON: its service says so (service.SessionChecker); without
	// the services, the shared record check refuses it.
	rtdb := []byte(`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"commit","service":"database","path":"/a","before":"x","after":3}]}`)
	if _, err := decode(rtdb); err != nil {
		t.Errorf("database commit of a scalar: %v", err)
	}
	if _, err := Decode(rtdb, nil); err == nil || !strings.Contains(err.Error(), "fixture.events[0].before must be an object or null") {
		t.Errorf("database commit without its service: %v", err)
	}
	f, err := decode([]byte(`{"schema":"pyric.verify.fixture.v1","events":[{"seq":1,"kind":"commit","service":"firestore","path":"a/b","after":{"n":9007199254740993}}],"services":{"firestore":{"rules":{"format":"firestore.rules","source":"x"},"state":{"documents":{"a/b":{"n":1}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Events[0].Commit.After.(map[string]any)["n"]; n == nil || n.(interface{ String() string }).String() != "9007199254740993" {
		t.Errorf("integers must stay exact: %v", n)
	}
	out, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decode(out); err != nil {
		t.Fatalf("encode/decode round trip: %v\n%s", err, out)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema":"pyric.verify.fixture.v1","events":[]}`))
	f.Add([]byte(`{"schema":"pyric.verify.fixture.v1","events":[{"seq":1,"kind":"request","method":"create","path":"a/b","verdict":"deny","identity":{"lens":"user","uid":"u"},"resource":{"exists":false}}],"services":{"firestore":{"state":{"documents":{"a/b":{}}}}}}`))
	f.Add([]byte(`{"schema":"pyric.verify.fixture.v1","events":[{"kind":"commit","path":"a/b","before":null,"after":{"x":{"__type":"timestamp","seconds":1,"nanos":2}},"sentinels":[{"field":"x","kind":"serverTimestamp"}]}]}`))
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`{"schema":"pyric.verify.fixture.v1","events":[],"services":{"firestore":{"state":{}}}}` + "\n" +
		`{"event":{"seq":1,"kind":"commit","path":"a/b","after":{"n":1}}}` + "\n" +
		`{"service":"firestore","key":["documents","a/b"],"value":{"n":1}}` + "\n" +
		`{"service":"firestore","key":["documents","a/c"]}` + "\n" + `{"description":"d"}` + "\n" + `{"event":{"se`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fx, err := decode(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		out, err := Encode(fx)
		if err != nil {
			t.Fatalf("a decoded fixture does not encode: %v", err)
		}
		if _, err := decode(out); err != nil {
			t.Fatalf("re-decoding an encoded fixture: %v\n%s", err, out)
		}
	})
}

// TestRecorderAlwaysValid writes through a running backend and checks the
// file on disk parses after every flush, and that the final fixture holds
// every event and the final state.
func TestRecorderAlwaysValid(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	path := filepath.Join(t.TempDir(), "s", "last-session.json")
	rec, err := Start(context.Background(), b.Sandbox, path, Options{Debounce: 1})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil {
		t.Fatalf("no fixture written at start: %v", err)
	} else if _, err := decode(data); err != nil {
		t.Fatalf("the fixture written at start does not parse: %v", err)
	}
	fs := testfs.Of(b.Sandbox).Admin()
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		if err := fs.SetDocument(ctx, "c/d"+string(rune('a'+i%26)), map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decode(data); err != nil {
			t.Fatalf("fixture on disk does not parse after write %d: %v", i, err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	for _, e := range fx.Events {
		if e.Kind == "commit" {
			commits++
		}
	}
	if commits != 50 {
		t.Errorf("captured %d commits, want 50", commits)
	}
	if st := fx.Services["firestore"]; st == nil || !strings.Contains(string(st.State), `"c/dx"`) {
		t.Errorf("final state missing: %+v", st)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestRecorderBounded(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(context.Background(), b.Sandbox, path, Options{MaxEvents: 20})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		testfs.Of(b.Sandbox).Admin().SetDocument(context.Background(), "c/d", map[string]any{"i": i})
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Events) > 20 || !strings.Contains(fx.Description, "oldest") {
		t.Fatalf("%d events kept, description %q", len(fx.Events), fx.Description)
	}
}

func TestRecorderHandler(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	rec, err := Start(context.Background(), b.Sandbox, filepath.Join(t.TempDir(), "s.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	testfs.Of(b.Sandbox).Admin().SetDocument(context.Background(), "c/d", map[string]any{"i": 1})
	srv := httptest.NewServer(rec.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, err := decode(data); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %d %v", resp.StatusCode, err)
	}
	resp, _ = http.Post(srv.URL, "application/json", nil)
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Fatalf("POST = %d", resp.StatusCode)
	}
}

// TestFixtureStorageStateWithoutBytes: a fixture keeps what the rules see
// of each Storage object, never its bytes.
func TestFixtureStorageStateWithoutBytes(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	st := b.Sandbox.Service(storage.Service).(*storage.Engine)
	if _, err := st.Put(identity.AdminIdentity(), storage.PutRequest{Bucket: b.Project + ".appspot.com", Name: "a/b.txt", Body: strings.NewReader("hello")}); err != nil {
		t.Fatal(err)
	}
	f, err := FromSandbox(b.Sandbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := string(f.Services[storage.Service].State)
	if strings.Contains(state, `"data"`) || strings.Contains(state, "aGVsbG8") || !strings.Contains(state, `"size":5`) || !strings.Contains(state, `"md5Hash":"XUFAKrxLKna5cZ2REBfFkg=="`) {
		t.Fatalf("storage state: %s", state)
	}
}

// TestRecorderKeepsPrevious: a fixture already at the path (a killed
// server's session) is kept as PreviousPath, and temporary files a killed
// rewrite left are removed.
func TestRecorderKeepsPrevious(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	dir := t.TempDir()
	path := filepath.Join(dir, "last-session.json")
	old := []byte(`{"schema":"pyric.verify.fixture.v1","events":[],"services":{}}`)
	os.WriteFile(path, old, 0o644)
	os.WriteFile(filepath.Join(dir, ".last-session.json.tmp-123"), []byte("{torn"), 0o644)
	rec, err := Start(context.Background(), b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if got, err := os.ReadFile(filepath.Join(dir, "last-session.previous.json")); err != nil || string(got) != string(old) {
		t.Fatalf("previous session: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".last-session.json.tmp-123")); !os.IsNotExist(err) {
		t.Fatalf("stale temporary file kept: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) == string(old) {
		t.Fatal("the new session did not start a new fixture")
	}
}

// TestRecorderFileIsTheFixture checks that the session file, written
// from events encoded as they arrived, decodes to the same fixture as
// the one built from the events (what the handler and SaveNamed write).
func TestRecorderFileIsTheFixture(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(context.Background(), b.Sandbox, path, Options{MaxEvents: 30, Description: "a <session> & more"})
	if err != nil {
		t.Fatal(err)
	}
	fs := testfs.Of(b.Sandbox).Admin()
	for i := range 45 { // past MaxEvents: trimmed events leave both
		if err := fs.SetDocument(context.Background(), fmt.Sprintf("c/d%d", i%7), map[string]any{"i": i, "s": "<&>"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	built, err := rec.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	full, err := Encode(built)
	if err != nil {
		t.Fatal(err)
	}
	fromFixture, err := decode(full)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromFile)
	b2, _ := json.Marshal(fromFixture)
	if string(a) != string(b2) {
		t.Errorf("the session file differs from the fixture:\nfile:    %.400s\nfixture: %.400s", a, b2)
	}
	if len(fromFile.Events) == 0 || len(fromFile.Events) > 30 {
		t.Errorf("%d events in the file", len(fromFile.Events))
	}
}

// TestRecorderStartsWithRules checks the file Start writes, before any
// event, carries the rules in force (and parses).
func TestRecorderStartsWithRules(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	if _, err := b.Rules(backend.Firestore).SetRulesFile("firestore.rules", "rules_version = '2';\nservice cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read: if true; } } }"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	rec, err := Start(context.Background(), b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	data, _ := os.ReadFile(path)
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if sd := fx.Services["firestore"]; sd == nil || sd.Rules == nil || !strings.Contains(sd.Rules.Source, "allow read") {
		t.Errorf("rules missing from the file at start: %s", data)
	}
}

// Past MaxBytes (the kept events' encoded size) the recorder drops the
// oldest events as past MaxEvents.
func TestRecorderBoundedByBytes(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(context.Background(), b.Sandbox, path, Options{MaxBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 4000)
	for i := 0; i < 40; i++ {
		testfs.Of(b.Sandbox).Admin().SetDocument(context.Background(), "c/d", map[string]any{"i": i, "s": big})
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	fx, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, e := range fx.Events {
		b, _ := json.Marshal(e)
		kept += len(b)
	}
	if len(fx.Events) == 0 || len(fx.Events) >= 40 || !strings.Contains(fx.Description, "oldest") {
		t.Fatalf("%d events kept (of 80 or more), description %q", len(fx.Events), fx.Description)
	}
	if kept > 72<<10 {
		t.Errorf("the kept events take ~%d KiB, past the 64 KiB bound", kept>>10)
	}
}

// TestRecorderKeepsDamagedAside: a session file that is not a fixture
// (garbled on disk) is not overwritten, nor rotated over the previous
// session: it is kept, unchanged, under DamagedPath, with a warning that
// names both paths; a damaged previous session is kept aside the same way.
func TestRecorderKeepsDamagedAside(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	for _, c := range []struct {
		name    string
		garbled string // which file is garbled
	}{{"session", "last-session.json"}, {"previous session", "last-session.previous.json"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "last-session.json")
			good := []byte(`{"schema":"pyric.verify.fixture.v1","events":[],"services":{}}`)
			garbage := append(append([]byte(nil), good[:30]...), 0xff, 0x00, '{')
			os.WriteFile(path, good, 0o644)
			os.WriteFile(PreviousPath(path), good, 0o644)
			os.WriteFile(filepath.Join(dir, c.garbled), garbage, 0o644)
			os.WriteFile(DamagedPath(filepath.Join(dir, c.garbled), 1), []byte("an earlier one"), 0o644)
			var warned []string
			rec, err := Start(context.Background(), b.Sandbox, path, Options{Warn: func(m string) { warned = append(warned, m) }})
			if err != nil {
				t.Fatal(err)
			}
			rec.Close()
			kept := DamagedPath(filepath.Join(dir, c.garbled), 2)
			if got, err := os.ReadFile(kept); err != nil || string(got) != string(garbage) {
				t.Fatalf("kept aside: %q %v", got, err)
			}
			if got, _ := os.ReadFile(DamagedPath(filepath.Join(dir, c.garbled), 1)); string(got) != "an earlier one" {
				t.Errorf("an earlier damaged copy was overwritten: %q", got)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], filepath.Join(dir, c.garbled)) || !strings.Contains(warned[0], kept) || !strings.Contains(warned[0], "not valid JSON") {
				t.Errorf("warnings %q", warned)
			}
			if c.garbled == "last-session.previous.json" {
				// The intact session became the previous one.
				if got, _ := os.ReadFile(PreviousPath(path)); string(got) != string(good) {
					t.Errorf("previous session %q", got)
				}
			}
		})
	}
}

// TestRecorderChecksPreviousOnce: the previous session was checked by
// the start that kept it, which wrote its stamp into the new session:
// the next start does not read it again while it is unchanged (so a
// garbling that kept its size and time goes unseen, which is how the
// test knows), and checks it when it changed.
func TestRecorderChecksPreviousOnce(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	dir := t.TempDir()
	path := filepath.Join(dir, "last-session.json")
	var warned []string
	session := func() {
		t.Helper()
		rec, err := Start(context.Background(), b.Sandbox, path, Options{Warn: func(m string) { warned = append(warned, m) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
	}
	garble := func(keepTime bool) []byte {
		t.Helper()
		prev := PreviousPath(path)
		fi, err := os.Stat(prev)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(prev)
		data[0] = 'x'
		if err := os.WriteFile(prev, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if keepTime {
			os.Chtimes(prev, fi.ModTime(), fi.ModTime())
		}
		return data
	}
	session()
	session() // keeps the first as the previous one
	second, _ := os.ReadFile(path)
	garble(true)
	session()
	if len(warned) != 0 {
		t.Fatalf("the previous session, checked when it was kept, was read again: %q", warned)
	}
	if got, _ := os.ReadFile(PreviousPath(path)); string(got) != string(second) {
		t.Fatalf("previous session %q, want the second one", got)
	}
	garbled := garble(false)
	session()
	if len(warned) != 1 || !strings.Contains(warned[0], "not valid JSON") {
		t.Fatalf("a changed previous session was not checked: warnings %q", warned)
	}
	if got, _ := os.ReadFile(DamagedPath(PreviousPath(path), 1)); string(got) != string(garbled) {
		t.Fatalf("the damaged previous session was not kept aside: %q", got)
	}
}

// TestRecorderUnflushedNotKept: a session killed before its first flush
// (the file Start writes: no events, no state) holds nothing, and is not
// kept over the previous session, whose stamp the next session carries
// on.
func TestRecorderUnflushedNotKept(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	dir := t.TempDir()
	path := filepath.Join(dir, "last-session.json")
	good := []byte(`{"schema":"pyric.verify.fixture.v1","events":[],"services":{"firestore":{"state":{"documents":{"c/d":{"a":1}}}}}}` + "\n")
	os.WriteFile(PreviousPath(path), good, 0o644)
	fi, _ := os.Stat(PreviousPath(path))
	stamp := stampOf(fi)
	unflushed, _ := json.Marshal(sessionHead{Fixture: &Fixture{Schema: Schema, Events: []event.Event{}, Services: map[string]*ServiceData{}}, KeptPrevious: stamp, Unflushed: true})
	os.WriteFile(path, append(unflushed, '\n'), 0o644)
	rec, err := Start(context.Background(), b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	rec.Close()
	if got, _ := os.ReadFile(PreviousPath(path)); string(got) != string(good) {
		t.Fatalf("the previous session was replaced by one that never flushed: %q", got)
	}
	head := &headFields{}
	if readHead(data, head); head.KeptPrevious == nil || *head.KeptPrevious != *stamp {
		t.Fatalf("the new session says it kept %+v, want %+v", head.KeptPrevious, stamp)
	}
	// A fixture with no events and no state that Start did not write
	// is kept as any other.
	os.WriteFile(path, []byte(`{"schema":"pyric.verify.fixture.v1","events":[],"services":{}}`), 0o644)
	rec, err = Start(context.Background(), b.Sandbox, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	if got, _ := os.ReadFile(PreviousPath(path)); string(got) != `{"schema":"pyric.verify.fixture.v1","events":[],"services":{}}` {
		t.Fatalf("previous session %q", got)
	}
}

// TestRecorderFirstFlushWaits: the first flush, which writes the whole
// state, waits FirstFlush whatever comes meanwhile (reads and writes, as
// clients probing the ports send): the file stays Start's, unflushed;
// Flush writes it at once; without it, it comes once FirstFlush passed,
// with what came meanwhile.
func TestRecorderFirstFlushWaits(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	fs := testfs.Of(b.Sandbox).Admin()
	if err := fs.SetDocument(ctx, "c/before", map[string]any{"i": 1}); err != nil {
		t.Fatal(err)
	}
	flushed := func(path string) bool {
		data, _ := os.ReadFile(path)
		h := &headFields{}
		readHead(data, h)
		return h.read && !h.empty()
	}
	waitFlushed := func(path string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !flushed(path); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the first flush did not come")
			}
		}
	}
	path := filepath.Join(t.TempDir(), "last-session.json")
	rec, err := Start(ctx, b.Sandbox, path, Options{FirstFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	request := event.Event{Service: "firestore", Kind: event.KindRequest, Method: "get", Path: "c/before", Request: &event.Request{Verdict: event.Bypassed}}
	for range 5 {
		b.Sandbox.Events().Emit(request)
	}
	if err := fs.SetDocument(ctx, "c/after", map[string]any{"i": 2}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if flushed(path) {
		t.Fatal("reads or a write brought the first flush forward")
	}
	fx, err := rec.Fixture() // flushes
	if err != nil {
		t.Fatal(err)
	}
	if !flushed(path) {
		t.Fatal("Flush did not write the session")
	}
	if docs, err := stateDocs(fx); err != nil || docs["c/before"] == nil || docs["c/after"] == nil {
		t.Fatalf("state after the first flush: %v %v", docs, err)
	}

	path2 := filepath.Join(t.TempDir(), "last-session.json")
	rec2, err := Start(ctx, b.Sandbox, path2, Options{FirstFlush: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rec2.Close()
	if err := fs.SetDocument(ctx, "c/later", map[string]any{"i": 3}); err != nil {
		t.Fatal(err)
	}
	if flushed(path2) {
		t.Fatal("Start wrote more than an unflushed session")
	}
	waitFlushed(path2)
	data, _ := os.ReadFile(path2)
	fx2, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := stateDocs(fx2)
	if err != nil || docs["c/later"] == nil {
		t.Fatalf("the first flush's state lacks the write before it: %v %v", docs, err)
	}
	commits := 0
	for _, e := range fx2.Events {
		if e.Kind == event.KindCommit && e.Path == "c/later" {
			commits++
		}
	}
	if commits != 1 {
		t.Errorf("the first flush has %d commits of c/later, want 1", commits)
	}
}

// TestKeepPreviousAhead: KeepPrevious checks ahead of Start what Start
// keeps, changing nothing (a start that fails afterwards leaves the data
// dir as it was); Start moves the files as the check found them and
// warns of a damaged one; Start for another path checks that path's
// itself.
func TestKeepPreviousAhead(t *testing.T) {
	b, err := backend.Start(backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	dir := t.TempDir()
	path := filepath.Join(dir, "last-session.json")
	good := []byte(`{"schema":"pyric.verify.fixture.v1","events":[],"services":{}}` + "\n")
	garbled := []byte(`{"schema":` + "\xff")
	os.WriteFile(path, good, 0o644)
	os.WriteFile(PreviousPath(path), garbled, 0o644)
	fi, _ := os.Stat(path)
	p := KeepPrevious(path)
	<-p.done
	if got, _ := os.ReadFile(PreviousPath(path)); string(got) != string(garbled) {
		t.Fatalf("KeepPrevious changed the files: previous is %q", got)
	}
	// What the check found is what Start moves.
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	var warned []string
	rec, err := Start(context.Background(), b.Sandbox, path, Options{Previous: p, Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	rec.Close()
	if len(warned) != 1 || !strings.Contains(warned[0], DamagedPath(PreviousPath(path), 1)) {
		t.Errorf("warnings %q, want the damaged previous session's", warned)
	}
	if got, _ := os.ReadFile(PreviousPath(path)); string(got) != string(good) {
		t.Errorf("Start kept again: previous is %q", got)
	}
	head := &headFields{}
	if readHead(data, head); !head.KeptPrevious.matches(fi) {
		t.Errorf("the new session says it kept %+v", head.KeptPrevious)
	}

	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, good, 0o644)
	rec, err = Start(context.Background(), b.Sandbox, other, Options{Previous: p})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	if got, _ := os.ReadFile(PreviousPath(other)); string(got) != string(good) {
		t.Errorf("Start with another path's keeping did not keep its own: %q", got)
	}
}
