package verify_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/capture"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/verify"
)

const readRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /notes/{id} {
      allow read: if request.auth != null && resource.data.owner == request.auth.uid;
      allow write: if request.auth != null && request.resource.data.owner == request.auth.uid;
    }
  }
}
`

// TestVerifyListsAndListens: queries and listens are re-decided with
// their captured query — "rules are not filters" included — so closing
// reads reports alice's query and listen now-denied, and opening them
// reports bob's denied listen now-allowed.
func TestVerifyListsAndListens(t *testing.T) {
	b, err := backend.Start(backend.Options{Firestore: backend.FirestoreOptions{Rules: readRules}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	path := filepath.Join(t.TempDir(), "s.json")
	rec, err := capture.Start(context.Background(), b.Sandbox, path, capture.Options{Debounce: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alice := client(t, b.Addr(backend.Firestore), b.Project, "alice")
	bob := client(t, b.Addr(backend.Firestore), b.Project, "bob")
	if _, err := alice.Doc("notes/n1").Set(ctx, map[string]any{"owner": "alice"}); err != nil {
		t.Fatal(err)
	}
	mine := func(c *firestore.Client) firestore.Query { return c.Collection("notes").Where("owner", "==", "alice") }
	if _, err := mine(alice).Documents(ctx).GetAll(); err != nil {
		t.Fatal(err)
	}
	it := mine(alice).Snapshots(ctx)
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	it.Stop()
	bit := mine(bob).Snapshots(ctx)
	if _, err := bit.Next(); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("bob's listen: %v", err)
	}
	bit.Stop()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f := load(t, path)
	same, err := verify.Run(f, verify.Options{Registrations: regs()})
	if err != nil || !same.OK {
		t.Fatalf("same rules: %v %+v", err, same.Services["firestore"])
	}
	kinds := func(src string) map[string]int {
		t.Helper()
		res, err := verify.Run(f, verify.Options{Registrations: regs(), Candidates: map[string]*source.File{"firestore": sourceFile("c.rules", src)}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, d := range res.Services["firestore"].Divergences {
			out[d.Kind+" "+d.Method+" "+d.UID]++
			if d.Kind == verify.Unsupported {
				t.Errorf("unsupported: %+v", d)
			}
			if d.Kind == verify.NowDenied && d.Explanation == "" {
				t.Errorf("no explanation: %+v", d)
			}
		}
		return out
	}
	closed := kinds(strings.Replace(readRules, "allow read: if", "allow read: if false &&", 1))
	if closed["now-denied list alice"] != 1 || closed["now-denied listen alice"] != 1 {
		t.Errorf("closing reads: %v, want alice's list and listen now-denied", closed)
	}
	open := kinds(strings.Replace(readRules, "allow read: if", "allow read: if true ||", 1))
	if open["now-allowed listen bob"] != 1 || len(open) != 1 {
		t.Errorf("opening reads: %v, want only bob's listen now-allowed", open)
	}
}
