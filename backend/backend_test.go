package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/sandbox"
)

func TestStartServesEveryEndpoint(t *testing.T) {
	t.Parallel()
	b, err := backend.Start(backend.Options{Sandbox: sandbox.Options{Project: "demo-backend"},
		Firestore: backend.FirestoreOptions{Rules: "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read, write: if true; } } }"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	if len(b.Endpoints()) < 2 {
		t.Fatalf("endpoints = %+v", b.Endpoints())
	}
	for _, e := range b.Endpoints() {
		if e.Addr == "" || len(e.Env) == 0 || !strings.HasPrefix(e.Addr, "127.0.0.1:") {
			t.Errorf("endpoint %+v", e)
		}
	}
	// Firestore through the official Go client.
	ctx := context.Background()
	conn, err := grpc.NewClient("passthrough:///"+b.Addr(backend.Firestore), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := firestore.NewClient(ctx, "demo-backend", option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Doc("a/b").Set(ctx, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	if d, _ := testfs.Of(b.Sandbox).Admin().GetDocument(ctx, "a/b"); d == nil {
		t.Fatal("the write did not reach the sandbox")
	}
	// Auth over REST.
	resp, err := http.Post("http://"+b.Addr(backend.Auth)+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("anonymous sign-up: %d", resp.StatusCode)
	}
	// AI Logic: a Gemini-shaped generateContent answered offline.
	resp, err = http.Post("http://"+b.Addr(backend.AI)+"/v1beta/models/gemini-2.5-flash:generateContent?key=k", "application/json",
		strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"candidates"`) {
		t.Fatalf("generateContent: %d %s", resp.StatusCode, body)
	}
	// Realtime Database: an admin write over REST, read back; a client
	// read is denied (no database.rules.json).
	rtdb := "http://" + b.Addr(backend.Database)
	req, _ := http.NewRequest("PUT", rtdb+"/greeting.json?ns=demo-backend-default-rtdb", strings.NewReader(`{"text":"hi"}`))
	req.Header.Set("Authorization", "Bearer owner")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("RTDB PUT: %d", resp.StatusCode)
	}
	resp, err = http.Get(rtdb + "/greeting/text.json?ns=demo-backend-default-rtdb")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(body), "Permission denied") {
		t.Fatalf("unauthenticated RTDB read without rules: %d %s", resp.StatusCode, body)
	}
	// Storage: an admin upload through the GCS JSON API; a client read
	// through the Firebase API is denied (no storage.rules), an owner's is not.
	st := "http://" + b.Addr(backend.Storage)
	resp, err = http.Post(st+"/upload/storage/v1/b/demo-backend.appspot.com/o?uploadType=media&name=a.txt", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GCS upload: %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 403}, {"Bearer owner", 200}} {
		req, _ := http.NewRequest("GET", st+"/v0/b/demo-backend.appspot.com/o/a.txt?alt=media", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == 200 && string(body) != "hello") {
			t.Errorf("download with %q: %d %s", tc.auth, resp.StatusCode, body)
		}
	}
	if r := b.Rules(backend.Storage); r == nil {
		t.Error("Storage has no hot-reloadable rules")
	} else if _, _, loaded := r.RulesFile(); loaded {
		t.Error("Storage rules loaded without any given")
	}
	// Messaging: a token minted through the emulator endpoint, a send to it.
	resp, err = http.Post("http://"+b.Addr(backend.Messaging)+"/emulator/v1/projects/demo-backend/tokens", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var minted struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&minted)
	resp.Body.Close()
	if resp.StatusCode != 200 || minted.Token == "" {
		t.Fatalf("mint a token: %d %+v", resp.StatusCode, minted)
	}
	resp, err = http.Post("http://"+b.Addr(backend.Messaging)+"/v1/projects/demo-backend/messages:send", "application/json",
		strings.NewReader(`{"message":{"token":"`+minted.Token+`","data":{"k":"v"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "projects/demo-backend/messages/") {
		t.Fatalf("send: %d %s", resp.StatusCode, body)
	}
	env := map[string]string{}
	for _, e := range b.Endpoints() {
		for _, v := range e.Env {
			env[v.Name] = v.Value
		}
	}
	for name, want := range map[string]string{
		"FIRESTORE_EMULATOR_HOST": b.Addr(backend.Firestore), "FIREBASE_STORAGE_EMULATOR_HOST": b.Addr(backend.Storage),
		"STORAGE_EMULATOR_HOST": "http://" + b.Addr(backend.Storage), "PYRIC_AI_BASE_URL": "http://" + b.Addr(backend.AI),
	} {
		if env[name] != want {
			t.Errorf("%s = %q, want %q", name, env[name], want)
		}
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", b.Addr(backend.Auth), time.Second); err == nil {
		t.Error("the Auth port still accepts connections after Shutdown")
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

func TestStartReportsBusyPortAndDisables(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = backend.Start(backend.Options{Ports: map[string]int{backend.Auth: port}})
	var le *backend.ListenError
	if !errors.As(err, &le) || le.Service != backend.Auth {
		t.Fatalf("busy port: err = %v", err)
	}
	b, err := backend.Start(backend.Options{Ports: map[string]int{backend.Auth: backend.Disabled}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	if b.Addr(backend.Auth) != "" || b.Addr(backend.Firestore) == "" {
		t.Errorf("disabled auth: endpoints %+v", b.Endpoints())
	}
}
