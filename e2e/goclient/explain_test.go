package goclient

import (
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/server/firestore/fstest"
)

const explainRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow create: if request.auth != null
        && request.resource.data.title.size() < 20;
    }
  }
}
`

// TestDenialExplained: the Go client's error keeps the emulator's wording
// first and then names the failing sub-expression with its values.
func TestDenialExplained(t *testing.T) {
	t.Parallel()
	s := fstest.Start(t, fstest.Options{Project: "demo-explain", Rules: explainRules})
	alice := s.ClientAs(t, s.Project, firestore.DefaultDatabaseID, mockToken("alice"))
	_, err := alice.Doc("posts/p1").Create(bg, map[string]any{"title": strings.Repeat("t", 27)})
	st, _ := status.FromError(err)
	if st.Code() != codes.PermissionDenied {
		t.Fatalf("err = %v", err)
	}
	lines := strings.Split(st.Message(), "\n")
	if len(lines) < 3 || lines[0] != "" || lines[1] != "false for 'create' @ L5" {
		t.Fatalf("message does not start with the emulator's wording: %q", st.Message())
	}
	if want := "request.resource.data.title.size() < 20 → 27 < 20 is false"; lines[2] != want {
		t.Fatalf("explanation = %q, want %q", lines[2], want)
	}
}
