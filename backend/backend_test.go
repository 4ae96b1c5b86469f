package backend_test

import (
	"context"
	"errors"
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
		if e.Addr == "" || len(e.EnvVars) == 0 || !strings.HasPrefix(e.Addr, "127.0.0.1:") {
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
	if d, _ := b.Sandbox.Admin().Firestore().GetDocument(ctx, "a/b"); d == nil {
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
