package storage_test

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/value"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
	"github.com/pyric/pyric/storage/storagetest"
)

const bkt = "demo-pyric.appspot.com"

var (
	admin = identity.AdminIdentity()
	alice = identity.NewUser("alice", map[string]any{"sub": "alice"})
	anon  = identity.Anonymous()
)

type fixture struct {
	e   *storage.Engine
	rec *storagetest.Recorder
	env service.Env
}

// newEngine starts an engine with a fake clock; disk selects a data dir and
// a bbolt bucket.
func newEngine(t *testing.T, disk bool) *fixture {
	t.Helper()
	env := envFor(t, disk)
	e, err := storage.New(env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{e: e, rec: env.Events.(*storagetest.Recorder), env: env}
}

func diskEngine(tb testing.TB) *storage.Engine {
	e, err := storage.New(envFor(tb, true), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// envFor is a test environment with a fake clock.
func envFor(t testing.TB, disk bool) service.Env {
	t.Helper()
	var tick atomic.Int64
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rec := &storagetest.Recorder{}
	var ids atomic.Int64
	env := service.Env{
		Project: "demo-pyric",
		Now:     func() time.Time { return base.Add(time.Duration(tick.Add(1)) * time.Millisecond) },
		NewID:   func() string { return "id" + string(rune('a'+ids.Add(1)%26)) + time.Duration(ids.Load()).String() },
		Events:  rec,
	}
	if disk {
		dir := t.TempDir()
		b, err := storagetest.OpenBolt(filepath.Join(dir, "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		env.Bucket, env.DataDir = b, dir
	}
	return env
}

func ptr[T any](v T) *T { return &v }

func put(t *testing.T, e *storage.Engine, who identity.Identity, name, data string) *storage.Object {
	t.Helper()
	o, err := e.Put(who, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader(data), MediaType: "text/plain"})
	if err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
	return o
}

func read(t *testing.T, e *storage.Engine, who identity.Identity, name string) string {
	t.Helper()
	o, r, err := e.Open(who, storage.ReadRequest{Bucket: bkt, Name: name})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, o.Size))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPutReadChecksums(t *testing.T) {
	t.Parallel()
	for _, disk := range []bool{false, true} {
		f := newEngine(t, disk)
		data := "hello, storage"
		o := put(t, f.e, admin, "dir/a.txt", data)
		sum := md5.Sum([]byte(data))
		var c [4]byte
		binary.BigEndian.PutUint32(c[:], crc32.Checksum([]byte(data), crc32.MakeTable(crc32.Castagnoli)))
		if o.MD5Hash != base64.StdEncoding.EncodeToString(sum[:]) || o.CRC32C != base64.StdEncoding.EncodeToString(c[:]) {
			t.Errorf("checksums %s %s", o.MD5Hash, o.CRC32C)
		}
		if o.Size != int64(len(data)) || o.Metageneration != 1 || o.Generation == 0 || o.ContentType != "text/plain" {
			t.Errorf("object %+v", o)
		}
		if !o.TimeCreated.Equal(o.Updated) {
			t.Errorf("timeCreated %v updated %v", o.TimeCreated, o.Updated)
		}
		if got := read(t, f.e, admin, "dir/a.txt"); got != data {
			t.Errorf("read %q", got)
		}
		o2 := put(t, f.e, admin, "dir/a.txt", "v2")
		if o2.Generation <= o.Generation || o2.Metageneration != 1 {
			t.Errorf("overwrite generation %d after %d", o2.Generation, o.Generation)
		}
		if got := read(t, f.e, admin, "dir/a.txt"); got != "v2" {
			t.Errorf("overwrite read %q", got)
		}
		if _, err := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "dir/a.txt", Generation: o.Generation}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("old generation: %v", err)
		}
	}
}

func TestContentTypePrecedence(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	cases := []struct {
		name, attr, media, want string
	}{
		{"explicit", "image/png", "text/plain", "image/png"},
		{"media", "", "text/plain", "text/plain"},
		{"default", "", "", "application/octet-stream"},
	}
	for _, c := range cases {
		req := storage.PutRequest{Bucket: bkt, Name: c.name, MediaType: c.media, Body: strings.NewReader("x")}
		if c.attr != "" {
			req.Attrs.ContentType = ptr(c.attr)
		}
		o, err := f.e.Put(admin, req)
		if err != nil || o.ContentType != c.want {
			t.Errorf("%s: %v %v", c.name, o, err)
		}
	}
}

func TestUpdateMetadata(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	o, err := f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "m", Body: strings.NewReader("abc"),
		Attrs: storage.Attrs{Metadata: map[string]*string{"a": ptr("1"), "b": ptr("2")}, CacheControl: ptr("no-cache")}, NewToken: true})
	if err != nil {
		t.Fatal(err)
	}
	tok := o.DownloadTokens()
	if len(tok) != 1 || len(tok[0]) != 36 {
		t.Fatalf("token %v", tok)
	}
	u, err := f.e.Update(admin, bkt, "m", storage.Attrs{Metadata: map[string]*string{"a": nil, "c": ptr("3")}, CacheControl: ptr(""), ContentLanguage: ptr("en")}, storage.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := u.CustomMetadata(); len(got) != 2 || got["b"] != "2" || got["c"] != "3" {
		t.Errorf("metadata %v", got)
	}
	if u.CacheControl != "" || u.ContentLanguage != "en" || u.Metageneration != 2 || u.Generation != o.Generation || !u.Updated.After(o.Updated) || !u.TimeCreated.Equal(o.TimeCreated) {
		t.Errorf("patched %+v", u)
	}
	if !u.HasToken(tok[0]) {
		t.Error("the token was lost by a metadata patch")
	}
	if got := read(t, f.e, admin, "m"); got != "abc" {
		t.Errorf("bytes %q", got)
	}
	u, err = f.e.Update(admin, bkt, "m", storage.Attrs{ClearMetadata: true}, storage.Conditions{})
	if err != nil || len(u.CustomMetadata()) != 0 || !u.HasToken(tok[0]) || u.Metageneration != 3 {
		t.Errorf("clear: %+v %v", u, err)
	}
	u, _ = f.e.AddToken(admin, bkt, "m")
	if len(u.DownloadTokens()) != 2 {
		t.Errorf("tokens %v", u.DownloadTokens())
	}
	u, _ = f.e.RevokeToken(admin, bkt, "m", tok[0])
	if u.HasToken(tok[0]) || len(u.DownloadTokens()) != 1 {
		t.Errorf("revoke: %v", u.DownloadTokens())
	}
	if _, err := f.e.Update(admin, bkt, "missing", storage.Attrs{}, storage.Conditions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("update missing: %v", err)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	f := newEngine(t, true)
	put(t, f.e, admin, "d", "x")
	if err := f.e.Delete(admin, bkt, "d", storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.e.Delete(admin, bkt, "d", storage.Conditions{}); !errors.Is(err, storage.ErrNotFound) || storage.HTTPStatus(err) != 404 {
		t.Errorf("delete missing: %v", err)
	}
	if _, err := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "d"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("stat deleted: %v", err)
	}
	blobs, _ := os.ReadDir(filepath.Join(f.env.DataDir, "storage", "blobs"))
	if len(blobs) != 0 {
		t.Errorf("blobs left: %v", blobs)
	}
}

func TestPreconditions(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	p := func(name string, c storage.Conditions) error {
		_, err := f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader("x"), Conditions: c})
		return err
	}
	if err := p("c", storage.Conditions{GenerationMatch: ptr(int64(0))}); err != nil {
		t.Fatalf("create-if-absent: %v", err)
	}
	if err := p("c", storage.Conditions{GenerationMatch: ptr(int64(0))}); !errors.Is(err, storage.ErrFailedPrecondition) || storage.HTTPStatus(err) != 412 {
		t.Errorf("second create-if-absent: %v", err)
	}
	o, _ := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "c"})
	cases := []struct {
		name string
		c    func(o *storage.Object) storage.Conditions
		ok   bool
	}{
		{"gen match", func(o *storage.Object) storage.Conditions {
			return storage.Conditions{GenerationMatch: ptr(o.Generation)}
		}, true},
		{"gen mismatch", func(o *storage.Object) storage.Conditions {
			return storage.Conditions{GenerationMatch: ptr(o.Generation + 1)}
		}, false},
		{"gen not match equal", func(o *storage.Object) storage.Conditions {
			return storage.Conditions{GenerationNotMatch: ptr(o.Generation)}
		}, false},
		{"gen not match other", func(o *storage.Object) storage.Conditions {
			return storage.Conditions{GenerationNotMatch: ptr(o.Generation - 1)}
		}, true},
		{"meta match", func(*storage.Object) storage.Conditions {
			return storage.Conditions{MetagenerationMatch: ptr(int64(1))}
		}, true},
		{"meta mismatch", func(*storage.Object) storage.Conditions {
			return storage.Conditions{MetagenerationMatch: ptr(int64(2))}
		}, false},
		{"meta not match", func(*storage.Object) storage.Conditions {
			return storage.Conditions{MetagenerationNotMatch: ptr(int64(1))}
		}, false},
	}
	for _, c := range cases {
		_, err := f.e.Update(admin, bkt, "c", storage.Attrs{}, c.c(o))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		if err == nil {
			// keep metageneration at 1 for the next case
			put(t, f.e, admin, "c", "x")
			o, _ = f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "c"})
		}
	}
	if err := f.e.Delete(admin, bkt, "c", storage.Conditions{GenerationMatch: ptr(int64(1))}); !errors.Is(err, storage.ErrFailedPrecondition) {
		t.Errorf("delete precondition: %v", err)
	}
	if _, err := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "c", Conditions: storage.Conditions{MetagenerationNotMatch: ptr(int64(1))}}); !errors.Is(err, storage.ErrFailedPrecondition) {
		t.Errorf("read precondition: %v", err)
	}
}

func names(r *storage.ListResult) (items []string) {
	for _, o := range r.Items {
		items = append(items, o.Name)
	}
	return items
}

func TestList(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	for _, n := range []string{"a/1", "a/2", "a/b/3", "a/b/4", "a/c/5", "a/d", "b/1", "a/"} {
		put(t, f.e, admin, n, n)
	}
	r, err := f.e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: "a/", Delimiter: "/", SkipPrefixObject: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(r), ","); got != "a/1,a/2,a/d" {
		t.Errorf("items %s", got)
	}
	if got := strings.Join(r.Prefixes, ","); got != "a/b/,a/c/" || r.NextPageToken != "" {
		t.Errorf("prefixes %s token %q", got, r.NextPageToken)
	}
	// Pages of 2 count items and prefixes together and cover everything once.
	var all []string
	tok := ""
	pages := 0
	for {
		r, err := f.e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: "a/", Delimiter: "/", MaxResults: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Items)+len(r.Prefixes) > 2 {
			t.Fatalf("page of %d", len(r.Items)+len(r.Prefixes))
		}
		all = append(all, names(r)...)
		all = append(all, r.Prefixes...)
		pages++
		if r.NextPageToken == "" {
			break
		}
		tok = r.NextPageToken
		if pages == 2 {
			// A write behind the cursor does not disturb the next page.
			put(t, f.e, admin, "a/0", "late")
		}
	}
	sort.Strings(all)
	if got := strings.Join(all, ","); got != "a/,a/1,a/2,a/b/,a/c/,a/d" || pages != 3 {
		t.Errorf("pages %d: %s", pages, got)
	}
	r, _ = f.e.List(admin, storage.ListRequest{Bucket: bkt})
	if len(r.Items) != 9 || len(r.Prefixes) != 0 {
		t.Errorf("flat list %v", names(r))
	}
	if _, err := f.e.List(admin, storage.ListRequest{Bucket: bkt, PageToken: "!!"}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("bad token: %v", err)
	}
	r, _ = f.e.List(admin, storage.ListRequest{Bucket: "other-bucket"})
	if len(r.Items) != 0 {
		t.Errorf("empty bucket: %v", names(r))
	}
	r, _ = f.e.List(admin, storage.ListRequest{Bucket: bkt, StartOffset: "a/b", EndOffset: "a/d"})
	if got := strings.Join(names(r), ","); got != "a/b/3,a/b/4,a/c/5" {
		t.Errorf("offsets %s", got)
	}
	put(t, f.e, admin, "a/b/", "dir marker")
	r, _ = f.e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: "a/", Delimiter: "/", IncludeTrailingDelimiter: true})
	if got := strings.Join(names(r), ","); got != "a/,a/0,a/1,a/2,a/b/,a/d" {
		t.Errorf("includeTrailingDelimiter %s", got)
	}
	for glob, want := range map[string]string{"a/*": "a/,a/0,a/1,a/2,a/d", "a/**": "a/,a/0,a/1,a/2,a/b/,a/b/3,a/b/4,a/c/5,a/d", "a/?": "a/0,a/1,a/2,a/d",
		"a/[12]": "a/1,a/2", "{a,b}/1": "a/1,b/1", "**/[!0-4]": "a/c/5,a/d"} {
		r, err := f.e.List(admin, storage.ListRequest{Bucket: bkt, MatchGlob: glob})
		if got := strings.Join(names(r), ","); err != nil || got != want {
			t.Errorf("glob %s: %s %v, want %s", glob, got, err, want)
		}
	}
	for _, bad := range []string{"a[", "{a"} {
		if _, err := f.e.List(admin, storage.ListRequest{Bucket: bkt, MatchGlob: bad}); !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("glob %s: %v", bad, err)
		}
	}
}

func TestResumable(t *testing.T) {
	t.Parallel()
	for _, disk := range []bool{false, true} {
		f := newEngine(t, disk)
		u, err := f.e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "big", MediaType: "application/x-test"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := u.Append(0, strings.NewReader("01234")); err != nil || n != 5 {
			t.Fatalf("append: %d %v", n, err)
		}
		if _, err := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "big"}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("partial upload visible: %v", err)
		}
		if _, err := u.Append(7, strings.NewReader("x")); !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("gap: %v", err)
		}
		// A retried chunk overlapping what was received is trimmed.
		if n, err := u.Append(3, strings.NewReader("3456789")); err != nil || n != 10 {
			t.Fatalf("overlap: %d %v", n, err)
		}
		if _, err := u.Append(10, strings.NewReader("extra")); err == nil {
			t.Error("bytes beyond the declared size were accepted")
		}
		if _, err := u.Finalize(); err == nil {
			t.Error("finalize after an oversize chunk")
		}
		u, _ = f.e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "big"}, -1)
		same, err := f.e.Upload(u.ID)
		if err != nil || same != u {
			t.Fatalf("lookup: %v", err)
		}
		u.Append(0, strings.NewReader("0123456789"))
		if _, err := u.Finalize(); err != nil {
			t.Fatal(err)
		}
		again, err := u.Finalize()
		if err != nil || again.Size != 10 {
			t.Errorf("re-finalize %v %v", again, err)
		}
		if got := read(t, f.e, admin, "big"); got != "0123456789" {
			t.Errorf("read %q", got)
		}
		c, _ := f.e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "cancelled"}, -1)
		c.Append(0, strings.NewReader("zz"))
		if err := c.Cancel(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Append(2, strings.NewReader("z")); !errors.Is(err, storage.ErrCancelled) {
			t.Errorf("append after cancel: %v", err)
		}
		if _, err := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "cancelled"}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("cancelled upload visible: %v", err)
		}
		if _, err := f.e.Upload("nope"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("unknown upload: %v", err)
		}
	}
}

const testRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow write: if request.auth != null && request.auth.uid == uid
                   && (request.resource == null || request.resource.size < 10);
    }
    match /public/{file=**} {
      allow read;
      allow create: if request.resource.contentType.matches('text/.*');
    }
    match /teams/{team}/{file} {
      allow read: if firestore.get(/databases/(default)/documents/teams/$(team)).data.members.hasAny([request.auth.uid]);
    }
  }
}`

func TestRules(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	// Without rules: everything but admin is denied.
	if _, err := f.e.Put(alice, storage.PutRequest{Bucket: bkt, Name: "users/alice/a", Body: strings.NewReader("x")}); !errors.Is(err, storage.ErrPermissionDenied) {
		t.Fatalf("no rules: %v", err)
	}
	if _, err := f.e.SetRules("storage.rules", "service firebase.storage { match /b/{b}/o { allow read: if } }"); err == nil {
		t.Fatal("bad rules compiled")
	}
	if _, err := f.e.SetRules("storage.rules", testRules); err != nil {
		t.Fatal(err)
	}
	f.e.SetFirestore(lookupFunc(func(path string) (value.Map, bool, error) {
		if path == "teams/red" {
			return value.Map{"members": value.List{value.String("alice")}}, true, nil
		}
		return nil, false, nil
	}))
	deny := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrPermissionDenied) || storage.HTTPStatus(err) != 403 {
			t.Errorf("%s: want denied, got %v", what, err)
		}
	}
	allow := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	pr := func(who identity.Identity, name, data, ct string) error {
		_, err := f.e.Put(who, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader(data), MediaType: ct})
		return err
	}
	allow("own create", pr(alice, "users/alice/a", "small", ""))
	deny("too big", pr(alice, "users/alice/b", "0123456789", ""))
	deny("other's", pr(alice, "users/bob/a", "x", ""))
	deny("anonymous", pr(anon, "users/alice/c", "x", ""))
	allow("public text", pr(anon, "public/t", "x", "text/plain"))
	deny("public binary", pr(anon, "public/b", "x", "image/png"))
	deny("public update", pr(anon, "public/t", "y", "text/plain"))
	_, err := f.e.Stat(anon, storage.ReadRequest{Bucket: bkt, Name: "public/missing"})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("allowed read of a missing object: %v", err)
	}
	_, err = f.e.Stat(anon, storage.ReadRequest{Bucket: bkt, Name: "users/alice/a"})
	deny("anon read", err)
	_, err = f.e.List(alice, storage.ListRequest{Bucket: bkt, Prefix: "users/alice/", Delimiter: "/"})
	allow("own list", err)
	_, err = f.e.List(alice, storage.ListRequest{Bucket: bkt, Prefix: "users/bob/", Delimiter: "/"})
	deny("other's list", err)
	deny("other's delete", f.e.Delete(anon, bkt, "users/alice/a", storage.Conditions{}))
	_, err = f.e.Update(alice, bkt, "users/alice/a", storage.Attrs{ContentType: ptr("text/x")}, storage.Conditions{})
	allow("own update", err)
	// A download token grants the read whatever the rules say.
	o, _ := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "users/alice/a", EnsureToken: true})
	_, err = f.e.Stat(anon, storage.ReadRequest{Bucket: bkt, Name: "users/alice/a", Token: o.DownloadTokens()[0]})
	allow("token read", err)
	_, err = f.e.Stat(anon, storage.ReadRequest{Bucket: bkt, Name: "users/alice/a", Token: "wrong"})
	deny("wrong token", err)
	// firestore.get() through the lookup.
	put(t, f.e, admin, "teams/red/doc", "x")
	put(t, f.e, admin, "teams/blue/doc", "x")
	_, err = f.e.Stat(alice, storage.ReadRequest{Bucket: bkt, Name: "teams/red/doc"})
	allow("member read", err)
	_, err = f.e.Stat(alice, storage.ReadRequest{Bucket: bkt, Name: "teams/blue/doc"})
	deny("non-member read", err)
	allow("own delete", f.e.Delete(alice, bkt, "users/alice/a", storage.Conditions{}))

	// Every request was recorded with its verdict; denials carry the rules'
	// explanation.
	var denied, allowed, changes int
	for _, ev := range f.rec.Events() {
		switch {
		case ev.Kind == event.KindRequest && ev.Verdict == event.Deny:
			denied++
			if ev.Decision == nil || ev.Decision.Engine != "storage" || ev.Decision.Reason == "" || ev.Err == nil {
				t.Errorf("denial without explanation: %+v", ev)
			}
		case ev.Kind == event.KindRequest && (ev.Verdict == event.Allow || ev.Verdict == event.Bypassed):
			allowed++
		case ev.Kind == event.KindMutation && ev.Op != storage.OpRulesSet:
			changes++
		}
		if ev.Service != "storage" {
			t.Errorf("event service %q", ev.Service)
		}
	}
	if denied < 10 || allowed < 8 || changes < 5 {
		t.Errorf("events: %d denied, %d allowed, %d changes", denied, allowed, changes)
	}
}

type lookupFunc func(string) (value.Map, bool, error)

func (f lookupFunc) Lookup(p string) (value.Map, bool, error) { return f(p) }

func TestResumableRules(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	f.e.SetRules("", testRules)
	if _, err := f.e.StartUpload(alice, storage.PutRequest{Bucket: bkt, Name: "users/alice/big"}, 100); !errors.Is(err, storage.ErrPermissionDenied) {
		t.Errorf("declared size not checked at start: %v", err)
	}
	u, err := f.e.StartUpload(alice, storage.PutRequest{Bucket: bkt, Name: "users/alice/big"}, -1)
	if err != nil {
		t.Fatal(err)
	}
	u.Append(0, strings.NewReader("0123456789abc"))
	if _, err := u.Finalize(); !errors.Is(err, storage.ErrPermissionDenied) {
		t.Errorf("real size not checked at finalize: %v", err)
	}
	if _, err := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "users/alice/big"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("denied upload visible: %v", err)
	}
}

func TestPersistence(t *testing.T) {
	t.Parallel()
	f := newEngine(t, true)
	put(t, f.e, admin, "keep", "kept bytes")
	put(t, f.e, admin, "gone", "x")
	f.e.Delete(admin, bkt, "gone", storage.Conditions{})
	f.e.Update(admin, bkt, "keep", storage.Attrs{Metadata: map[string]*string{"k": ptr("v")}}, storage.Conditions{})
	u, _ := f.e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "partial"}, -1)
	u.Append(0, strings.NewReader("half"))
	// An orphan blob (a crash between rename and metadata commit).
	os.WriteFile(filepath.Join(f.env.DataDir, "storage", "blobs", "999999999999999999"), []byte("orphan"), 0o644)

	e2, err := storage.New(f.env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, e2, admin, "keep"); got != "kept bytes" {
		t.Errorf("reopened read %q", got)
	}
	o, _ := e2.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "keep"})
	if o.Metadata["k"] != "v" || o.Metageneration != 2 {
		t.Errorf("reopened metadata %+v", o)
	}
	for _, n := range []string{"gone", "partial"} {
		if _, err := e2.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: n}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s after reopen: %v", n, err)
		}
	}
	blobs, _ := os.ReadDir(filepath.Join(f.env.DataDir, "storage", "blobs"))
	tmp, _ := os.ReadDir(filepath.Join(f.env.DataDir, "storage", "tmp"))
	// The orphan is removed; "keep" is small enough to have no file.
	if len(blobs) != 0 || len(tmp) != 0 {
		t.Errorf("blobs %v tmp %v", blobs, tmp)
	}
	// New generations stay above the restored ones.
	o2 := put(t, e2, admin, "keep", "v2")
	if o2.Generation <= o.Generation {
		t.Errorf("generation went back: %d <= %d", o2.Generation, o.Generation)
	}
}

func TestSnapshotRestoreReset(t *testing.T) {
	t.Parallel()
	for _, disk := range []bool{false, true} {
		f := newEngine(t, disk)
		put(t, f.e, admin, "a", "AAA")
		put(t, f.e, admin, "b/c", "C")
		snap, err := f.e.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		put(t, f.e, admin, "later", "L")
		f.e.Delete(admin, bkt, "a", storage.Conditions{})
		if err := f.e.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if got := read(t, f.e, admin, "a"); got != "AAA" {
			t.Errorf("restored %q", got)
		}
		if _, err := f.e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "later"}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("later survived restore: %v", err)
		}
		again, _ := f.e.Snapshot()
		if !bytes.Equal(again, snap) {
			t.Errorf("snapshot after restore differs:\n%s\n%s", snap, again)
		}
		if err := f.e.Restore([]byte("{bad")); err == nil {
			t.Error("bad snapshot restored")
		}
		if got := read(t, f.e, admin, "b/c"); got != "C" {
			t.Errorf("after failed restore %q", got)
		}
		if disk {
			e2, _ := storage.New(f.env, storage.Options{})
			if got := read(t, e2, admin, "a"); got != "AAA" {
				t.Errorf("restore not durable: %q", got)
			}
		}
		if err := f.e.Reset(); err != nil {
			t.Fatal(err)
		}
		r, _ := f.e.List(admin, storage.ListRequest{Bucket: bkt})
		if len(r.Items) != 0 {
			t.Errorf("after reset %v", names(r))
		}
	}
}

func TestCopy(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	src, _ := f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "src", Body: strings.NewReader("copy me"),
		Attrs: storage.Attrs{ContentType: ptr("text/x"), Metadata: map[string]*string{"a": ptr("1")}}})
	o, err := f.e.Copy(admin, storage.CopyRequest{SrcBucket: bkt, SrcName: "src", DstBucket: "other-bucket", DstName: "dst"})
	if err != nil {
		t.Fatal(err)
	}
	if o.ContentType != "text/x" || o.Metadata["a"] != "1" || o.MD5Hash != src.MD5Hash || o.Bucket != "other-bucket" || o.Generation == src.Generation {
		t.Errorf("copy %+v", o)
	}
	o, err = f.e.Copy(admin, storage.CopyRequest{SrcBucket: bkt, SrcName: "src", DstBucket: bkt, DstName: "src2",
		Attrs: &storage.Attrs{Metadata: map[string]*string{"b": ptr("2")}}})
	if err != nil || o.Metadata["a"] != "" || o.Metadata["b"] != "2" || o.ContentType != "text/x" {
		t.Errorf("copy with attrs %+v %v", o, err)
	}
	if _, err := f.e.Copy(admin, storage.CopyRequest{SrcBucket: bkt, SrcName: "nope", DstBucket: bkt, DstName: "x"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("copy missing: %v", err)
	}
	got := f.e.Buckets()
	if strings.Join(got, ",") != "demo-pyric.appspot.com,demo-pyric.firebasestorage.app,other-bucket" {
		t.Errorf("buckets %v", got)
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	for _, c := range []struct{ b, n string }{{"UPPER", "x"}, {"ok-bucket", ""}, {"ok-bucket", "a\nb"}, {"ok-bucket", ".."}, {"ok-bucket", strings.Repeat("x", 1025)}, {"ok-bucket", "\xff"}} {
		_, err := f.e.Put(admin, storage.PutRequest{Bucket: c.b, Name: c.n, Body: strings.NewReader("x")})
		if !errors.Is(err, storage.ErrInvalidArgument) || storage.HTTPStatus(err) != 400 {
			t.Errorf("%q/%q: %v", c.b, c.n, err)
		}
	}
	huge := strings.Repeat("v", storage.MaxCustomMetadata)
	if _, err := f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "md", Body: strings.NewReader("x"), Attrs: storage.Attrs{Metadata: map[string]*string{"k": &huge}}}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("oversized metadata on put: %v", err)
	}
	put(t, f.e, admin, "md", "x")
	if _, err := f.e.Update(admin, bkt, "md", storage.Attrs{Metadata: map[string]*string{"k": &huge}}, storage.Conditions{}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("oversized metadata on update: %v", err)
	}
	small, _ := storage.New(service.Env{}, storage.Options{MaxObjectSize: 4})
	if _, err := small.Put(admin, storage.PutRequest{Bucket: bkt, Name: "x", Body: strings.NewReader("12345")}); !errors.Is(err, storage.ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
}

func TestUploadLimit(t *testing.T) {
	t.Parallel()
	e, _ := storage.New(envFor(t, false), storage.Options{MaxUploads: 2})
	start := func() (*storage.Upload, error) {
		return e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "u"}, -1)
	}
	a, _ := start()
	if _, err := start(); err != nil {
		t.Fatal(err)
	}
	if _, err := start(); !errors.Is(err, storage.ErrTooLarge) {
		t.Fatalf("third session: %v", err)
	}
	a.Append(0, strings.NewReader("x"))
	if _, err := a.Finalize(); err != nil {
		t.Fatal(err)
	}
	// The finished session is evicted to make room.
	if _, err := start(); err != nil {
		t.Errorf("after finalize: %v", err)
	}
	if _, err := e.Upload(a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("evicted session still there: %v", err)
	}
}

// TestFirestoreLookupLimit: production reads at most 2 distinct documents
// per request; a third distinct one denies, repeats are free.
func TestFirestoreLookupLimit(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	var calls atomic.Int64
	f.e.SetFirestore(lookupFunc(func(string) (value.Map, bool, error) {
		calls.Add(1)
		return value.Map{}, true, nil
	}))
	f.e.SetRules("", `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /two/{f} {
      allow read: if firestore.exists(/databases/(default)/documents/a/1) && firestore.exists(/databases/(default)/documents/a/2)
                  && firestore.exists(/databases/(default)/documents/a/1);
    }
    match /three/{f} {
      allow read: if firestore.exists(/databases/(default)/documents/a/1) && firestore.exists(/databases/(default)/documents/a/2)
                  && firestore.exists(/databases/(default)/documents/a/3);
    }
  }
}`)
	put(t, f.e, admin, "two/x", "x")
	put(t, f.e, admin, "three/x", "x")
	if _, err := f.e.Stat(alice, storage.ReadRequest{Bucket: bkt, Name: "two/x"}); err != nil {
		t.Errorf("two documents: %v", err)
	}
	if _, err := f.e.Stat(alice, storage.ReadRequest{Bucket: bkt, Name: "three/x"}); !errors.Is(err, storage.ErrPermissionDenied) {
		t.Errorf("three documents: %v", err)
	}
}

// TestResumableSurvivesRestart: a session's acknowledged bytes and its
// metadata outlive the engine; the client resumes where the query says.
// conformance: storage.upload.resumable-range
func TestResumableSurvivesRestart(t *testing.T) {
	t.Parallel()
	f := newEngine(t, true)
	f.e.SetRules("", testRules)
	u, err := f.e.StartUpload(alice, storage.PutRequest{Bucket: bkt, Name: "users/alice/r", MediaType: "text/x",
		Attrs: storage.Attrs{Metadata: map[string]*string{"k": ptr("v")}}, NewToken: true}, 9)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Append(0, strings.NewReader("01234")); err != nil {
		t.Fatal(err)
	}
	gone, _ := f.e.StartUpload(admin, storage.PutRequest{Bucket: bkt, Name: "gone"}, -1)
	gone.Append(0, strings.NewReader("zz"))
	gone.Cancel()
	f.e.Close()

	e2, err := storage.New(f.env, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e2.SetRules("", testRules) // the resumed session still decides as alice
	u2, err := e2.Upload(u.ID)
	if err != nil {
		t.Fatalf("session lost: %v", err)
	}
	if u2.Received() != 5 || u2.Total() != 9 || u2.Name() != "users/alice/r" || u2.State() != "active" {
		t.Fatalf("resumed %d/%d %s %s", u2.Received(), u2.Total(), u2.Name(), u2.State())
	}
	if _, err := e2.Upload(gone.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("cancelled session came back: %v", err)
	}
	if _, err := u2.Append(5, strings.NewReader("5678")); err != nil {
		t.Fatal(err)
	}
	o, err := u2.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if o.ContentType != "text/x" || o.Metadata["k"] != "v" || len(o.DownloadTokens()) != 1 {
		t.Errorf("resumed object %+v", o)
	}
	if got := read(t, e2, admin, "users/alice/r"); got != "012345678" {
		t.Errorf("resumed bytes %q", got)
	}
	sessions, _ := os.ReadDir(filepath.Join(f.env.DataDir, "storage", "sessions"))
	if len(sessions) != 0 {
		t.Errorf("session files left: %v", sessions)
	}
	e3, _ := storage.New(f.env, storage.Options{})
	if _, err := e3.Upload(u.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("finalized session came back: %v", err)
	}
}

// TestEvents: a request and the change it made, with the shape the
// original sandbox's storage events have.
func TestEvents(t *testing.T) {
	t.Parallel()
	f := newEngine(t, false)
	f.e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "sessions/s1.json", Body: strings.NewReader("{}"), MediaType: "application/json"})
	f.e.Update(admin, bkt, "sessions/s1.json", storage.Attrs{CacheControl: ptr("x")}, storage.Conditions{})
	f.e.Delete(admin, bkt, "sessions/s1.json", storage.Conditions{})
	f.e.Stat(anon, storage.ReadRequest{Bucket: bkt, Name: "sessions/s1.json"})
	var got []string
	for _, ev := range f.rec.Events() {
		line := fmt.Sprintf("%s %s %s %s", ev.Kind, ev.Method, ev.Path, ev.Identity.Lens)
		if ev.Request != nil {
			line += " " + string(ev.Verdict)
		}
		if m := ev.Mutation; m != nil {
			if c, ok := m.Current.(map[string]any); ok {
				line += fmt.Sprintf(" %v %v %v", c["bucket"], c["size"], c["contentType"])
			}
			line += fmt.Sprintf(" previous=%v", m.Previous != nil)
		}
		got = append(got, line)
	}
	want := []string{
		"request create sessions/s1.json admin bypassed",
		"mutation object_put sessions/s1.json admin demo-pyric.appspot.com 2 application/json previous=false",
		"request update sessions/s1.json admin bypassed",
		"mutation metadata_update sessions/s1.json admin demo-pyric.appspot.com 2 application/json previous=true",
		"request delete sessions/s1.json admin bypassed",
		"mutation object_delete sessions/s1.json admin previous=true",
		"request get sessions/s1.json unauthenticated deny",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestListSharedItemsAreTheStoredVersions: a Shared listing returns the
// stored objects themselves, and a later change of one stores a new
// version rather than changing it (what makes sharing them safe): an
// item listed before an update still shows the version it listed. A
// listing without Shared returns copies.
func TestListSharedItemsAreTheStoredVersions(t *testing.T) {
	t.Parallel()
	e := diskEngine(t)
	if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "a", Body: strings.NewReader("x"),
		Attrs: storage.Attrs{Metadata: map[string]*string{"k": ptr("v1")}}}); err != nil {
		t.Fatal(err)
	}
	shared, err := e.List(admin, storage.ListRequest{Bucket: bkt, Shared: true})
	if err != nil || len(shared.Items) != 1 {
		t.Fatalf("list: %+v %v", shared, err)
	}
	again, _ := e.List(admin, storage.ListRequest{Bucket: bkt, Shared: true})
	copied, _ := e.List(admin, storage.ListRequest{Bucket: bkt})
	if again.Items[0] != shared.Items[0] {
		t.Error("two shared listings of one version return different objects")
	}
	if copied.Items[0] == shared.Items[0] {
		t.Error("a listing without Shared returns the stored object")
	}
	copied.Items[0].Metadata["k"] = "changed by the caller"
	if _, err := e.Update(admin, bkt, "a", storage.Attrs{Metadata: map[string]*string{"k": ptr("v2")}}, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddToken(admin, bkt, "a"); err != nil {
		t.Fatal(err)
	}
	if o := shared.Items[0]; o.Metageneration != 1 || o.Metadata["k"] != "v1" || len(o.DownloadTokens()) != 0 {
		t.Errorf("the listed version changed after the update: metageneration %d, metadata %v", o.Metageneration, o.Metadata)
	}
	now, _ := e.List(admin, storage.ListRequest{Bucket: bkt, Shared: true})
	if o := now.Items[0]; o.Metageneration != 3 || o.Metadata["k"] != "v2" {
		t.Errorf("the listing after the update: metageneration %d, metadata %v", o.Metageneration, o.Metadata)
	}
}

// TestReadSharedIsTheStoredVersion: a Shared read returns the stored
// version itself, unchanged by a later update; an unshared one a copy.
func TestReadSharedIsTheStoredVersion(t *testing.T) {
	t.Parallel()
	e := diskEngine(t)
	if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: "a", Body: strings.NewReader("x"),
		Attrs: storage.Attrs{Metadata: map[string]*string{"k": ptr("v1")}}}); err != nil {
		t.Fatal(err)
	}
	req := storage.ReadRequest{Bucket: bkt, Name: "a", Shared: true}
	shared, err := e.Stat(admin, req)
	if err != nil {
		t.Fatal(err)
	}
	again, r, err := e.Open(admin, req)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	copied, _ := e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: "a"})
	if again != shared || copied == shared {
		t.Errorf("shared reads %p %p, unshared %p: want the first two the same, the third a copy", shared, again, copied)
	}
	if _, err := e.Update(admin, bkt, "a", storage.Attrs{Metadata: map[string]*string{"k": ptr("v2")}}, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if shared.Metageneration != 1 || shared.Metadata["k"] != "v1" {
		t.Errorf("the read version changed after the update: metageneration %d, metadata %v", shared.Metageneration, shared.Metadata)
	}
}
