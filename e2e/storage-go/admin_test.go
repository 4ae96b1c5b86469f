package storagego

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	gcs "cloud.google.com/go/storage"
	firebase "firebase.google.com/go/v4"
	"google.golang.org/api/option"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/storage"
)

// TestAdminSDK drives firebase-admin-go's storage client, which reaches the
// server through FIREBASE_STORAGE_EMULATOR_HOST as admin (rules bypassed:
// the server here has rules that deny every client).
func TestAdminSDK(t *testing.T) {
	e, host := start(t)
	if _, err := e.SetRules("storage.rules", "rules_version = '2';\nservice firebase.storage { match /b/{b}/o/{p=**} { allow read, write: if false; } }"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("FIREBASE_STORAGE_EMULATOR_HOST", host)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: "demo-pyric", StorageBucket: bucket}, option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	client, err := app.Storage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.DefaultBucket()
	if err != nil {
		t.Fatal(err)
	}
	w := b.Object("admin/a.txt").NewWriter(ctx)
	w.ContentType = "text/plain"
	io.WriteString(w, "from admin")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := b.Object("admin/a.txt").NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "from admin" {
		t.Errorf("read %q", got)
	}
	if err := b.Object("admin/a.txt").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Object("admin/a.txt").Attrs(ctx); !errors.Is(err, gcs.ErrObjectNotExist) {
		t.Errorf("after delete: %v", err)
	}
	// The same rules deny a client.
	if _, err := e.Stat(identity.NewUser("alice", nil), storage.ReadRequest{Bucket: bucket, Name: "admin/a.txt"}); !errors.Is(err, storage.ErrPermissionDenied) {
		t.Errorf("client read: %v", err)
	}
}
