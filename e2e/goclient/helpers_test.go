// Package goclient drives pyric's Firestore gRPC service with the official
// Go client (cloud.google.com/go/firestore v1.29.2, and its generated apiv1
// client for the RPCs the high-level client never calls), in-process
// through fstest: every RPC of google.firestore.v1.Firestore, listeners,
// transactions under contention, error codes and caller identities.
package goclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	vkit "cloud.google.com/go/firestore/apiv1"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/server/firestore/fstest"
)

var bg = context.Background()

// rules used by the identity and denial tests: users may touch only their
// own document; public documents are readable by anyone and writable by
// no client.
const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /public/{doc} {
      allow read: if true;
      allow write: if false;
    }
    match /open/{doc=**} {
      allow read, write: if true;
    }
  }
}
`

func start(t *testing.T) *fstest.Server {
	t.Helper()
	return fstest.Start(t, fstest.Options{Project: "demo-goclient", Rules: rules})
}

// raw returns the generated gapic client (for GetDocument, CreateDocument,
// UpdateDocument, DeleteDocument, Write, …) acting as token.
func raw(t *testing.T, s *fstest.Server, token string) *vkit.Client {
	t.Helper()
	c, err := vkit.NewClient(bg, option.WithGRPCConn(s.Conn(t, token)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dbPath(s *fstest.Server) string { return "projects/" + s.Project + "/databases/(default)" }

func docPath(s *fstest.Server, rel string) string { return dbPath(s) + "/documents/" + rel }

// wantCode fails unless err has the gRPC code and its message contains
// every fragment.
func wantCode(t *testing.T, what string, err error, code codes.Code, fragments ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: got %v, want code %v", what, err, code)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(status.Convert(err).Message(), f) {
			t.Errorf("%s: message %q lacks %q", what, status.Convert(err).Message(), f)
		}
	}
}

func mockToken(uid string) string {
	return emulator.MockToken(map[string]any{"sub": uid, "user_id": uid, "iat": 0, "exp": 3600,
		"iss": "https://securetoken.google.com/demo-goclient", "aud": "demo-goclient",
		"firebase": map[string]any{"sign_in_provider": "custom", "identities": map[string]any{}}})
}

// next reads the next snapshot of a listener within a deadline.
func next[T any](t *testing.T, what string, f func() (T, error)) T {
	t.Helper()
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := f()
		ch <- res{v, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		return r.v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no snapshot within 10s", what)
	}
	panic("unreachable")
}

var _ = errors.Is
var _ = firestore.Increment
