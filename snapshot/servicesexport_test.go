package snapshot

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
)

func openAll(t *testing.T, project string) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.Open(sandbox.Options{Project: project, Services: backend.Services(&backend.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// serviceState is one service's part of a sandbox snapshot.
func serviceState(t *testing.T, sb *sandbox.Sandbox, svc string) string {
	t.Helper()
	st, err := serviceStates(sb)
	if err != nil {
		t.Fatal(err)
	}
	return string(st[svc])
}

// seedServices writes Realtime Database and Storage state with the cases
// an export must keep: priorities, arrays, big numbers, a second
// namespace; object names with spaces and slashes, custom metadata,
// download tokens, two buckets, an empty object.
func seedServices(t *testing.T, sb *sandbox.Sandbox) {
	t.Helper()
	db := sb.Service("database").(*database.Database)
	admin := identity.AdminIdentity()
	ns := database.DefaultNamespace(sb.Project())
	for _, w := range []struct {
		ns, path string
		v        any
	}{
		{ns, "/users/alice", map[string]any{"name": "Alice", "n": json.Number("9007199254740993"), "f": 1.5, ".priority": 3.0}},
		{ns, "/list", []any{"a", "b", map[string]any{"c": true}}},
		{ns, "/leaf", map[string]any{".value": "x", ".priority": "p"}},
		{"other-ns", "/x", "in another namespace"},
	} {
		if _, err := db.Set(admin, w.ns, w.path, w.v, database.WriteOptions{}); err != nil {
			t.Fatal(w.path, err)
		}
	}
	st := sb.Service(storage.Service).(*storage.Engine)
	ct, cc := "text/plain", "no-cache"
	for _, o := range []struct{ bucket, name, body string }{
		{"demo-x.appspot.com", "users/alice/hello world.txt", "hello"},
		{"demo-x.appspot.com", "a/b/c/deep.bin", "\x00\x01\x02"},
		{"demo-x.appspot.com", "empty", ""},
		{"second-bucket", "x.txt", "other bucket"},
	} {
		if _, err := st.Put(admin, storage.PutRequest{Bucket: o.bucket, Name: o.name, Body: strings.NewReader(o.body), NewToken: true,
			Attrs: storage.Attrs{ContentType: &ct, CacheControl: &cc, Metadata: map[string]*string{"k": &ct}}}); err != nil {
			t.Fatal(o.name, err)
		}
	}
}

// TestExportImportDatabaseAndStorage exports Realtime Database and Storage
// state in firebase-tools' layout and imports it into a fresh sandbox:
// the same state, exactly; a second export is byte for byte the first.
func TestExportImportDatabaseAndStorage(t *testing.T) {
	src := openAll(t, "demo-x")
	seedServices(t, src)
	dir := t.TempDir()
	if err := ExportDir(src, dir); err != nil {
		t.Fatal(err)
	}
	var md ExportMetadata
	data, _ := os.ReadFile(filepath.Join(dir, "firebase-export-metadata.json"))
	if err := json.Unmarshal(data, &md); err != nil || md.Services["database"] == nil || md.Services["database"].Path != "database_export" ||
		md.Services["storage"] == nil || md.Services["storage"].Path != "storage_export" {
		t.Fatalf("firebase-export-metadata.json: %s", data)
	}
	for _, f := range []string{"database_export/demo-x-default-rtdb.json", "database_export/other-ns.json", "storage_export/buckets.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	ns, _ := os.ReadFile(filepath.Join(dir, "database_export/demo-x-default-rtdb.json"))
	var tree map[string]any
	if err := json.Unmarshal(ns, &tree); err != nil || tree["users"].(map[string]any)["alice"].(map[string]any)[".priority"] != 3.0 {
		t.Errorf("the default namespace's export lacks its priorities: %s", ns)
	}
	buckets, _ := os.ReadFile(filepath.Join(dir, "storage_export/buckets.json"))
	if !strings.Contains(string(buckets), `"id": "second-bucket"`) {
		t.Errorf("buckets.json: %s", buckets)
	}
	mds, _ := filepath.Glob(filepath.Join(dir, "storage_export/metadata/*.json"))
	if len(mds) != 4 {
		t.Fatalf("%d metadata files, want 4", len(mds))
	}
	for _, p := range mds {
		raw, _ := os.ReadFile(p)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		// The fields and forms firebase-tools' StoredFileMetadata has.
		if _, ok := m["size"].(float64); !ok || m["storageClass"] != "STANDARD" || m["customMetadata"].(map[string]any)["k"] != "text/plain" {
			t.Errorf("%s: %s", p, raw)
		}
		if toks, ok := m["downloadTokens"].([]any); !ok || len(toks) != 1 {
			t.Errorf("%s: downloadTokens %v", p, m["downloadTokens"])
		}
		if c, ok := m["crc32c"].(string); !ok || strings.ContainsAny(c, "=+/") {
			t.Errorf("%s: crc32c %v is not firebase-tools' decimal form", p, m["crc32c"])
		}
		blob, err := os.Stat(filepath.Join(dir, "storage_export/blobs", strings.TrimSuffix(filepath.Base(p), ".json")))
		if err != nil || float64(blob.Size()) != m["size"] {
			t.Errorf("%s: blob %v %v", p, blob, err)
		}
	}

	dst := openAll(t, "demo-x")
	if err := ImportDir(dst, dir); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"database", storage.Service} {
		if a, b := serviceState(t, src, svc), serviceState(t, dst, svc); a != b {
			t.Errorf("%s round trip differs:\n%.3000s\n---\n%.3000s", svc, a, b)
		}
	}
	if !dst.Service(storage.Service).(*storage.Engine).HasBucket("second-bucket") {
		t.Error("second-bucket was not imported")
	}
	again := t.TempDir()
	if err := ExportDir(dst, again); err != nil {
		t.Fatal(err)
	}
	for _, rel := range append([]string{"database_export/demo-x-default-rtdb.json", "database_export/other-ns.json", "storage_export/buckets.json"}, relAll(dir, mds)...) {
		a, _ := os.ReadFile(filepath.Join(dir, rel))
		b, _ := os.ReadFile(filepath.Join(again, rel))
		if string(a) != string(b) {
			t.Errorf("%s differs on the second export:\n%s\n---\n%s", rel, a, b)
		}
	}
}

func relAll(base string, paths []string) []string {
	var out []string
	for _, p := range paths {
		r, _ := filepath.Rel(base, p)
		out = append(out, r)
	}
	return out
}

// TestImportStorageErrors: a broken export is refused with the file named,
// and nothing of it is loaded.
func TestImportStorageErrors(t *testing.T) {
	src := openAll(t, "demo-x")
	seedServices(t, src)
	for name, breakIt := range map[string]func(dir string){
		"metadata not JSON": func(dir string) {
			mds, _ := filepath.Glob(filepath.Join(dir, "storage_export/metadata/*.json"))
			os.WriteFile(mds[0], []byte("{"), 0o644)
		},
		"blob missing": func(dir string) {
			blobs, _ := filepath.Glob(filepath.Join(dir, "storage_export/blobs/*"))
			os.Remove(blobs[0])
		},
		"bad bucket": func(dir string) {
			os.WriteFile(filepath.Join(dir, "storage_export/buckets.json"), []byte(`{"buckets":[{"id":"NO SPACES"}]}`), 0o644)
		},
		"namespace not JSON": func(dir string) {
			os.WriteFile(filepath.Join(dir, "database_export/other-ns.json"), []byte(`{"a":`), 0o644)
		},
		"path outside": func(dir string) {
			os.WriteFile(filepath.Join(dir, "firebase-export-metadata.json"), []byte(`{"version":"x","storage":{"version":"x","path":"../elsewhere"}}`), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := ExportDir(src, dir); err != nil {
				t.Fatal(err)
			}
			breakIt(dir)
			dst := openAll(t, "demo-x")
			before := serviceState(t, dst, storage.Service)
			err := ImportDir(dst, dir)
			if err == nil {
				t.Fatal("imported a broken export")
			}
			if !strings.Contains(err.Error(), "export") {
				t.Errorf("error %q does not say which export file", err)
			}
			if after := serviceState(t, dst, storage.Service); after != before {
				t.Errorf("a failed import changed the state")
			}
		})
	}
}

// TestFirebaseToolsStorageLayout runs firebase-tools' own Storage
// import/export code on pyric's export: it finds every object, bytes and
// metadata as pyric had them; then pyric imports firebase-tools' export
// of the same objects plus one firebase-tools created itself.
func TestFirebaseToolsStorageLayout(t *testing.T) {
	e2etest.NeedNode(t)
	src := openAll(t, "demo-x")
	seedServices(t, src)
	dir := t.TempDir()
	if err := ExportDir(src, dir); err != nil {
		t.Fatal(err)
	}
	work, out := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, here, _, _ := runtime.Caller(0)
	stdout := e2etest.RunNode(t, ctx, filepath.Join(filepath.Dir(here), "testdata", "ftstorage.cjs"),
		"IN="+filepath.Join(dir, "storage_export"), "OUT="+out, "WORK="+work, "HOME="+work)
	var seen struct {
		Objects []struct {
			Bucket, Name, ContentType, MD5Hash, CRC32C, Data string
			CacheControl                                     *string
			Size                                             int64
			CustomMetadata                                   map[string]string
			DownloadTokens                                   []string
		} `json:"objects"`
		Buckets []string `json:"buckets"`
	}
	e2etest.LastJSONLine(t, stdout, &seen)
	st := src.Service(storage.Service).(*storage.Engine)
	if len(seen.Objects) != 4 {
		t.Fatalf("firebase-tools imported %d objects, want 4: %s", len(seen.Objects), stdout)
	}
	for _, o := range seen.Objects {
		want, r, err := st.Open(identity.AdminIdentity(), storage.ReadRequest{Bucket: o.Bucket, Name: o.Name})
		if err != nil {
			t.Fatalf("%s/%s: %v", o.Bucket, o.Name, err)
		}
		body := make([]byte, want.Size)
		r.ReadAt(body, 0)
		r.Close()
		crc, _ := base64.StdEncoding.DecodeString(want.CRC32C)
		if o.Size != want.Size || o.MD5Hash != want.MD5Hash || o.ContentType != want.ContentType || o.CacheControl == nil ||
			*o.CacheControl != want.CacheControl || o.CustomMetadata["k"] != "text/plain" || len(o.DownloadTokens) != 1 ||
			o.DownloadTokens[0] != want.DownloadTokens()[0] || o.Data != base64.StdEncoding.EncodeToString(body) ||
			o.CRC32C != strconv.FormatUint(uint64(binary.BigEndian.Uint32(crc)), 10) {
			t.Errorf("firebase-tools sees %s/%s as %+v, pyric has %+v", o.Bucket, o.Name, o, want)
		}
	}
	wantBuckets := st.Buckets()
	sort.Strings(wantBuckets)
	if strings.Join(seen.Buckets, ",") != strings.Join(wantBuckets, ",") {
		t.Errorf("firebase-tools buckets %v, pyric's %v", seen.Buckets, wantBuckets)
	}

	// firebase-tools' export, with the hub's metadata file, into pyric.
	md, _ := json.Marshal(map[string]any{"version": "14.0.0", "storage": ExportEntry{Version: "14.0.0", Path: "storage_export"}})
	if err := os.WriteFile(filepath.Join(out, "firebase-export-metadata.json"), md, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := openAll(t, "demo-x")
	if err := ImportDir(dst, out); err != nil {
		t.Fatal(err)
	}
	de := dst.Service(storage.Service).(*storage.Engine)
	for _, o := range seen.Objects {
		got, err := de.Stat(identity.AdminIdentity(), storage.ReadRequest{Bucket: o.Bucket, Name: o.Name})
		if err != nil || got.MD5Hash != o.MD5Hash || got.Size != o.Size || got.CustomMetadata()["k"] != "text/plain" || !got.HasToken(o.DownloadTokens[0]) {
			t.Errorf("%s/%s after the round trip through firebase-tools: %+v %v", o.Bucket, o.Name, got, err)
		}
	}
	got, r, err := de.Open(identity.AdminIdentity(), storage.ReadRequest{Bucket: "demo-x.appspot.com", Name: "from/firebase tools.txt"})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, got.Size)
	r.ReadAt(body, 0)
	r.Close()
	if string(body) != "made by firebase-tools" || got.ContentType != "text/plain" || got.CustomMetadata()["origin"] != "firebase-tools" || !got.HasToken("tok-1") {
		t.Errorf("firebase-tools' own object: %+v %q", got, body)
	}
}

// FuzzLoadSnapshot: `pyric snapshot load` decodes a whole snapshot (every
// service's state) without panicking, and a snapshot it refuses leaves
// the state as it was.
func FuzzLoadSnapshot(f *testing.F) {
	f.Add([]byte(`{"version": 3, "services": {"firestore": {"documents": {"a/b": {"x": 1}}}}}`))
	f.Add([]byte(`{"version": 3, "services": {"database": {"namespaces": {"n": {"data": {"a": {".priority": 1, ".value": 2}}, "rules": "{\"rules\": {}}"}}}}}`))
	f.Add([]byte(`{"version": 3, "services": {"storage": {"objects": [{"bucket": "b", "name": "x", "data": "YWJj", "metadata": {"k": "v"}}]}}}`))
	f.Add([]byte(`{"version": 3, "services": {"storage": {"objects": [{"bucket": "", "name": "../x"}]}, "auth": null}}`))
	sb, err := sandbox.Open(sandbox.Options{Project: "demo-x", Services: backend.Services(&backend.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	before, err := sb.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	// The services' states (savedAt aside).
	states := func() string {
		st, err := serviceStates(sb)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := json.Marshal(st)
		return string(b)
	}
	want := states()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := sb.LoadSnapshot(data); err != nil {
			if got := states(); got != want {
				t.Fatalf("a refused snapshot changed the state: %v\n%s\n---\n%s", err, want, got)
			}
			return
		}
		// Put the starting state back for the next input.
		if err := sb.LoadSnapshot(before); err != nil {
			t.Fatal(err)
		}
	})
}

// TestImportFirebaseToolsAuthExport creates accounts in firebase-tools'
// Auth emulator, lets `firebase emulators:exec --export-on-exit` write
// its export, and imports it into pyric: the same users, and the password
// account signs in with its password.
func TestImportFirebaseToolsAuthExport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts firebase-tools' Auth emulator (~30 s)")
	}
	e2etest.NeedNode(t)
	work := t.TempDir()
	ports := benchkit.FreePorts(t, 3)
	cfg, _ := json.Marshal(map[string]any{"emulators": map[string]any{
		"auth": map[string]any{"port": ports[0], "host": "127.0.0.1"}, "hub": map[string]any{"port": ports[1], "host": "127.0.0.1"},
		"logging": map[string]any{"port": ports[2], "host": "127.0.0.1"}, "ui": map[string]any{"enabled": false}}})
	if err := os.WriteFile(filepath.Join(work, "firebase.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "testdata", "ftauth_users.cjs")
	out := filepath.Join(work, "export")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(e2etest.JSDir(), "node_modules", ".bin", "firebase"), "emulators:exec", "--only", "auth",
		"--project", "demo-x", "--export-on-exit", out, "node "+script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+work, "FIREBASE_CLI_DISABLE_UPDATE_CHECK=true", "CI=true")
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "created") {
		t.Fatalf("firebase emulators:exec: %v\n%s", err, b)
	}
	sb := openAll(t, "demo-x")
	if err := ImportDir(sb, out); err != nil {
		t.Fatal(err)
	}
	c := auth.Call{Caller: identity.AdminIdentity(), Project: "demo-x"}
	page, err := authOf(t, sb).BatchGet(c, auth.BatchGetRequest{MaxResults: "100"})
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]map[string]any{}
	for _, u := range page.Users {
		b, _ := json.Marshal(u)
		var m map[string]any
		json.Unmarshal(b, &m)
		users[m["email"].(string)] = m
	}
	if len(users) != 3 {
		t.Fatalf("imported %d users, want 3: %v", len(users), users)
	}
	if a := users["alice@example.com"]; a["displayName"] != "Alice" {
		t.Errorf("alice: %v", a)
	}
	if b := users["bob@example.com"]; b["localId"] != "bob" || b["phoneNumber"] != "+15555550100" || !strings.Contains(fmt.Sprint(b["customAttributes"]), `"role":"admin"`) {
		t.Errorf("bob: %v", b)
	}
	if c := users["carol@example.com"]; c["disabled"] != true {
		t.Errorf("carol: %v", c)
	}
	email := "alice@example.com"
	if _, err := authOf(t, sb).SignInWithPassword(auth.Call{Caller: identity.Anonymous(), Project: "demo-x"},
		auth.SignInWithPasswordRequest{Email: &email, Password: "secret123"}); err != nil {
		t.Errorf("alice signs in with her password after the import: %v", err)
	}
}

// TestExportDataDirServices: `pyric export DIR --data-dir D` on a stopped
// server's data directory carries its Realtime Database and Storage state
// (object bytes live in files beside the store), and `--import` of that
// export into another data directory restores it.
func TestExportDataDirServices(t *testing.T) {
	data := t.TempDir()
	sb, err := sandbox.Open(sandbox.Options{Project: "demo-x", DataDir: data, Services: backend.Services(&backend.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	seedServices(t, sb)
	want := map[string]string{"database": serviceState(t, sb, "database"), storage.Service: serviceState(t, sb, storage.Service)}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := ExportDataDir(data, out, allServices); err != nil {
		t.Fatal(err)
	}
	if blobs, _ := filepath.Glob(filepath.Join(out, "storage_export/blobs/*")); len(blobs) != 4 {
		t.Errorf("%d blobs exported, want 4", len(blobs))
	}
	other := t.TempDir()
	if err := ImportDataDir(other, out, allServices); err != nil {
		t.Fatal(err)
	}
	back, err := sandbox.Open(sandbox.Options{Project: "demo-x", DataDir: other, Services: backend.Services(&backend.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	for svc, w := range want {
		if got := serviceState(t, back, svc); got != w {
			t.Errorf("%s after export and import through data dirs:\n%.2000s\n---\n%.2000s", svc, got, w)
		}
	}
}

// serviceStates is every service's snapshot state, taken at one moment.
func serviceStates(sb *sandbox.Sandbox) (map[string]json.RawMessage, error) {
	snap, err := sb.Snapshot()
	if err != nil {
		return nil, err
	}
	var s struct {
		Services map[string]json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(snap, &s); err != nil {
		return nil, err
	}
	return s.Services, nil
}

// authOf is the sandbox's Auth engine.
func authOf(t *testing.T, sb *sandbox.Sandbox) *auth.Engine {
	t.Helper()
	e, ok := sandbox.Lookup[*auth.Engine](sb)
	if !ok {
		t.Fatal("no auth service")
	}
	return e
}
