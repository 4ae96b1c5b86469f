package functions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/functions/trigger"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, raw string
		want      []Codebase
		err       string
	}{
		{name: "absent", raw: ``},
		{name: "null", raw: `null`},
		{name: "object", raw: `{"source":"functions","predeploy":["npm run build"]}`,
			want: []Codebase{{Name: "default", Source: "/p/functions", Ignore: DefaultIgnore}}},
		{name: "list", raw: `[{"source":"a","codebase":"one","runtime":"nodejs22","ignore":["x"]},{"source":"/abs/b","codebase":"two"}]`,
			want: []Codebase{{Name: "one", Source: "/p/a", Runtime: "nodejs22", Ignore: []string{"x"}}, {Name: "two", Source: "/abs/b", Ignore: DefaultIgnore}}},
		{name: "no source", raw: `{"codebase":"x"}`, err: `functions: "source" is required`},
		{name: "duplicate codebase", raw: `[{"source":"a"},{"source":"b"}]`, err: `codebase "default" is listed twice`},
		{name: "duplicate source", raw: `[{"source":"a","codebase":"x"},{"source":"./a","codebase":"y"}]`, err: `source "./a" is used by two codebases`},
		{name: "bad name", raw: `{"source":"a","codebase":"Bad Name"}`, err: `codebase "Bad Name": use 1 to 63 lowercase`},
		{name: "not json", raw: `{"source":`, err: `functions:`},
		{name: "name of 63", raw: `{"source":"a","codebase":"` + strings.Repeat("a", 63) + `"}`,
			want: []Codebase{{Name: strings.Repeat("a", 63), Source: "/p/a", Ignore: DefaultIgnore}}},
		{name: "name of 64", raw: `{"source":"a","codebase":"` + strings.Repeat("a", 64) + `"}`, err: `use 1 to 63 lowercase`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseConfig(json.RawMessage(c.raw), "/p")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestParseDotenv(t *testing.T) {
	t.Parallel()
	got, err := ParseDotenv("# comment\nA=1\nexport B = two words # trailing\nC=\"line\\nbreak \\\"q\\\"\"\nD='single \\n kept'\nE=\n\r\nF=x=y\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "1", "B": "two words", "C": "line\nbreak \"q\"", "D": `single \n kept`, "E": "", "F": "x=y"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	for _, c := range []struct{ in, err string }{
		{"not a line\n", "error on lines: not a line"},
		{"GCLOUD_PROJECT=x\n", "key GCLOUD_PROJECT is reserved"},
		{"FIREBASE_X=1\n", "reserved prefix"},
		{"lower=1\n", "must start with an uppercase"},
	} {
		if _, err := ParseDotenv(c.in); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.err)
		}
	}
	if _, err := ParseDotenv("FIREBASE_SECRET_REF_X=1\n"); err != nil {
		t.Errorf("an allowed prefix: %v", err)
	}
}

func TestLoadUserEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", "A=env\nB=env\nC=env\n")
	write(".env.demo-x", "B=project\nC=project\n")
	write(".env.other", "C=other project\n")
	write(".env.local", "C=local\n")
	write(".secret.local", "API_KEY=s3cret\n")
	write(".runtimeconfig.json", `{ "svc": { "key": "v" } }`)
	env, err := LoadUserEnv(dir, "demo-x")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "env", "B": "project", "C": "local", "API_KEY": "s3cret", "CLOUD_RUNTIME_CONFIG": `{"svc":{"key":"v"}}`}
	if !reflect.DeepEqual(env.Vars, want) {
		t.Errorf("vars %q, want %q", env.Vars, want)
	}
	if want := []string{".env", ".env.demo-x", ".env.local", ".secret.local", ".runtimeconfig.json"}; !reflect.DeepEqual(env.Files, want) {
		t.Errorf("files %q", env.Files)
	}
	write(".env", "bad line\n")
	if _, err := LoadUserEnv(dir, "demo-x"); err == nil || !strings.Contains(err.Error(), "from .env:") {
		t.Errorf("bad .env: %v", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, raw string
		check     func(t *testing.T, e Endpoint)
		err       string
	}{
		{name: "v2 https defaults", raw: `{"platform":"gcfv2","httpsTrigger":{},"entryPoint":"hello"}`, check: func(t *testing.T, e Endpoint) {
			if e.Kind() != "https" || e.Regions[0] != DefaultRegion || e.Timeout != DefaultTimeout || e.Concurrency != DefaultConcurrency || e.MemoryMB != DefaultMemoryMB || !e.IsHTTP() {
				t.Errorf("%+v", e)
			}
		}},
		{name: "v1 callable options", raw: `{"platform":"gcfv1","callableTrigger":{},"region":["europe-west1","us-east1"],"timeoutSeconds":9,"availableMemoryMb":1024,"concurrency":50}`, check: func(t *testing.T, e Endpoint) {
			if e.Kind() != "callable" || !reflect.DeepEqual(e.Regions, []string{"europe-west1", "us-east1"}) || e.Timeout != 9*time.Second || e.MemoryMB != 1024 || e.Concurrency != 1 {
				t.Errorf("%+v", e)
			}
		}},
		{name: "v2 event", raw: `{"platform":"gcfv2","concurrency":3,"eventTrigger":{"eventType":"google.cloud.firestore.document.v1.written","eventFilters":{"database":"(default)","namespace":"(default)"},"eventFilterPathPatterns":{"document":"a/{b}"},"retry":false}}`, check: func(t *testing.T, e Endpoint) {
			if e.Event == nil || e.Event.EventFilterPathPatterns["document"] != "a/{b}" || e.Event.EventFilters["database"] != "(default)" || e.Concurrency != 3 || e.IsHTTP() {
				t.Errorf("%+v %+v", e, e.Event)
			}
		}},
		{name: "blocking", raw: `{"platform":"gcfv2","blockingTrigger":{"eventType":"providers/cloud.auth/eventTypes/user.beforeCreate","options":{"idToken":true}}}`, check: func(t *testing.T, e Endpoint) {
			if e.Blocking == nil || e.Blocking.Options["idToken"] != true || !e.IsHTTP() {
				t.Errorf("%+v", e)
			}
		}},
		{name: "schedule", raw: `{"platform":"gcfv2","scheduleTrigger":{"schedule":"every 5 minutes","timeZone":null}}`, check: func(t *testing.T, e Endpoint) {
			// onSchedule is an HTTP function (Cloud Scheduler POSTs to it).
			if e.Schedule == nil || e.Schedule.Schedule != "every 5 minutes" || !e.IsHTTP() {
				t.Errorf("%+v", e)
			}
		}},
		{name: "v1 schedule", raw: `{"platform":"gcfv1","scheduleTrigger":{"schedule":"0 9 * * *","timeZone":"America/New_York"}}`, check: func(t *testing.T, e Endpoint) {
			// pubsub.schedule() takes the job topic's Pub/Sub event.
			if e.Schedule == nil || e.Schedule.TimeZone != "America/New_York" || e.IsHTTP() {
				t.Errorf("%+v", e)
			}
		}},
		{name: "no trigger", raw: `{"platform":"gcfv2"}`, err: "declares 0 triggers"},
		{name: "two triggers", raw: `{"httpsTrigger":{},"callableTrigger":{}}`, err: "declares 2 triggers"},
		{name: "event without type", raw: `{"eventTrigger":{}}`, err: "no eventType"},
		{name: "bad platform", raw: `{"platform":"gcfv9","httpsTrigger":{}}`, err: `unknown platform "gcfv9"`},
		{name: "not an object", raw: `[]`, err: "__endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := ParseEndpoint("cb", "fn", json.RawMessage(c.raw))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.ID != "fn" || e.Codebase != "cb" {
				t.Errorf("id/codebase %q %q", e.ID, e.Codebase)
			}
			c.check(t, e)
		})
	}
}

// TestTriggerFunction: what the trigger dispatcher is given for an event
// endpoint, from the shapes firebase-functions 7.4.0 writes.
func TestTriggerFunction(t *testing.T) {
	t.Parallel()
	// onDocumentWritten("users/{uid}") with a region and retry (makeEndpoint).
	raw := `{"platform":"gcfv2","region":["europe-west1"],"labels":{},"eventTrigger":{"eventType":"google.cloud.firestore.document.v1.written","eventFilters":{"database":"(default)","namespace":"(default)"},"eventFilterPathPatterns":{"document":"users/{uid}"},"retry":true}}`
	e, err := ParseEndpoint("cb", "onUserWrite", json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := trigger.Function{ID: "onUserWrite", Platform: trigger.GCFv2, EventType: "google.cloud.firestore.document.v1.written",
		EventFilters: map[string]string{"database": "(default)", "namespace": "(default)"}, EventFilterPathPatterns: map[string]string{"document": "users/{uid}"},
		Retry: true, Region: "europe-west1"}
	if got := e.TriggerFunction(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// v1: makeCloudFunction's endpoint, no region.
	e, err = ParseEndpoint("cb", "v1", json.RawMessage(`{"platform":"gcfv1","eventTrigger":{"eventType":"providers/cloud.firestore/eventTypes/document.create","eventFilters":{"resource":"projects/demo-p/databases/(default)/documents/users/{uid}"},"retry":false},"labels":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f := e.TriggerFunction(); f.Region != DefaultRegion || f.Platform != trigger.GCFv1 || f.EventFilters["resource"] == "" || f.Retry {
		t.Fatalf("v1: %+v", f)
	}
	// A filter left as a parameter expression is refused, naming the function.
	_, err = ParseEndpoint("cb", "x", json.RawMessage(`{"platform":"gcfv2","eventTrigger":{"eventType":"google.cloud.firestore.document.v1.written","eventFilters":{"database":{"expr":"params.DB"}}}}`))
	if err == nil || !strings.Contains(err.Error(), "function x") {
		t.Fatalf("unresolved param: err %v", err)
	}
}

func TestIgnored(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path string
		want bool
	}{
		{"node_modules", true}, {"node_modules/x/index.js", true}, {"lib/index.js", false},
		{".env.local", true}, {"firebase-debug.1.log", true}, {"src/a.ts", false}, {".git/HEAD", true},
	} {
		if got := ignored(c.path, DefaultIgnore); got != c.want {
			t.Errorf("ignored(%q) = %v", c.path, got)
		}
	}
}

func TestRuntimeEnv(t *testing.T) {
	t.Parallel()
	env := RuntimeEnv("demo-x", map[string]string{"firestore": "127.0.0.1:8080", "database": "127.0.0.1:9000", "storage": "127.0.0.1:9199", "auth": "127.0.0.1:9099", "hub": "127.0.0.1:4400"})
	want := map[string]string{
		"FIRESTORE_EMULATOR_HOST": "127.0.0.1:8080", "FIREBASE_FIRESTORE_EMULATOR_ADDRESS": "127.0.0.1:8080",
		"FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:9000", "FIREBASE_STORAGE_EMULATOR_HOST": "127.0.0.1:9199",
		"STORAGE_EMULATOR_HOST": "http://127.0.0.1:9199", "FIREBASE_AUTH_EMULATOR_HOST": "127.0.0.1:9099",
		"FIREBASE_EMULATOR_HUB": "127.0.0.1:4400", "FUNCTIONS_EMULATOR": "true", "TZ": "UTC", "GCLOUD_PROJECT": "demo-x",
		"FIREBASE_DEBUG_MODE": "true", "FIREBASE_DEBUG_FEATURES": `{"skipTokenVerification":true,"enableCors":true}`,
		"FIREBASE_CONFIG": `{"databaseURL":"http://127.0.0.1:9000/?ns=demo-x-default-rtdb","projectId":"demo-x","storageBucket":"demo-x.appspot.com"}`,
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["PUBSUB_EMULATOR_HOST"]; ok {
		t.Error("PUBSUB_EMULATOR_HOST set without a Pub/Sub service")
	}
}
