package firestore_test

import (
	"context"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
)

func TestLiveRulesKeepLastGoodRules(t *testing.T) {
	e := firestore.New(firestore.Options{})
	m := firestore.NewLiveRules(e)
	good := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{d=**} { allow read; }\n  }\n}\n"
	if _, err := m.Set("firestore.rules", good); err != nil {
		t.Fatal(err)
	}
	_, err := m.Set("firestore.rules", "service cloud.firestore { match /a { allow read: if ; } }")
	ce, ok := err.(*firestore.CompileError)
	if !ok {
		t.Fatalf("err = %v", err)
	}
	if !strings.HasPrefix(ce.EmulatorMessage(), "Error compiling rules:\nL1:") || !strings.Contains(ce.Error(), "firestore.rules:1:") {
		t.Errorf("messages: %q / %q", ce.EmulatorMessage(), ce.Error())
	}
	if _, text, loaded := m.Source("any"); !loaded || text != good {
		t.Errorf("last good rules not kept")
	}
}

// TestRulesPerProject: rules loaded for one project (the emulator's PUT
// securityRules) leave the others on the rules file; a new rules file
// replaces the home project's override.
func TestRulesPerProject(t *testing.T) {
	e := firestore.New(firestore.Options{})
	m := firestore.NewLiveRules(e)
	m.SetHomeProject("home")
	open := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{d=**} { allow read; }\n  }\n}\n"
	closed := strings.Replace(open, "allow read;", "allow read: if false;", 1)
	if _, err := m.Set("firestore.rules", closed); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetProject("a", "firestore.rules", open); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetProject("home", "firestore.rules", open); err != nil {
		t.Fatal(err)
	}
	get := func(project string) bool {
		_, err := e.GetDocument(context.Background(), identity.Anonymous(), &pb.GetDocumentRequest{Name: "projects/" + project + "/databases/(default)/documents/x/y"})
		return firestore.Code(err) != codes.PermissionDenied
	}
	if !get("a") || get("b") || !get("home") {
		t.Errorf("a %v b %v home %v, want true false true", get("a"), get("b"), get("home"))
	}
	if _, text, _ := m.Source("b"); text != closed {
		t.Error("b does not report the rules file")
	}
	if _, err := m.Set("firestore.rules", closed); err != nil {
		t.Fatal(err)
	}
	if !get("a") || get("home") {
		t.Errorf("after a new rules file: a %v home %v, want true false", get("a"), get("home"))
	}
}

// TestCoveragePerProject: projects sharing the rules file count coverage
// apart (the emulator reports it per project), allowed requests included.
func TestCoveragePerProject(t *testing.T) {
	e := firestore.New(firestore.Options{})
	m := firestore.NewLiveRules(e)
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /x/{id} { allow read: if id == 'y'; }\n  }\n}\n"
	if _, err := m.Set("firestore.rules", src); err != nil {
		t.Fatal(err)
	}
	m.CollectCoverage()
	get := func(project, id string) {
		e.GetDocument(context.Background(), identity.Anonymous(), &pb.GetDocumentRequest{Name: "projects/" + project + "/databases/(default)/documents/x/" + id})
	}
	get("a", "y") // allowed
	get("a", "y") // allowed
	get("b", "z") // denied
	counts := func(project string) (tr, fa int) {
		for _, x := range m.Coverage(project).Summary() {
			if x.Text == "id == 'y'" {
				return x.True, x.False
			}
		}
		return -1, -1
	}
	if tr, fa := counts("a"); tr != 2 || fa != 0 {
		t.Errorf("project a: true %d false %d, want 2 and 0", tr, fa)
	}
	if tr, fa := counts("b"); tr != 0 || fa != 1 {
		t.Errorf("project b: true %d false %d, want 0 and 1", tr, fa)
	}
}
