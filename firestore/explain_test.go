package firestore

import (
	"context"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/source"
)

const explainRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{id} {
      allow create: if request.auth != null && request.resource.data.title.size() < 20;
    }
  }
}
`

func TestDecisionLines(t *testing.T) {
	gate, diags := NewRulesGate(source.NewFile("rules", explainRules))
	if gate == nil {
		t.Fatal(diags)
	}
	db := DatabaseName{Project: "p", Database: "(default)"}
	d := gate.Authorize(context.Background(), &AuthzRequest{Database: db, Method: MethodCreate, Path: "posts/p1",
		Auth:  identity.NewUser("alice", nil),
		After: &pb.Document{Fields: map[string]*pb.Value{"title": {ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("x", 27)}}}}})
	if d.Verdict != Deny {
		t.Fatalf("verdict %v", d.Verdict)
	}
	got := d.Lines()
	want := "request.resource.data.title.size() < 20 → 27 < 20 is false"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want [%q]", got, want)
	}
}
