package storage_test

import (
	"fmt"
	"time"

	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/rules/value"
)

func Example() {
	rs, diags := storage.Compile(source.NewFile("storage.rules", `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /avatars/{uid} {
      allow read;
      allow write: if request.auth != null && request.auth.uid == uid
        && request.resource.size < 1024 * 1024
        && firestore.get(/databases/(default)/documents/users/$(uid)).data.active;
    }
  }
}`))
	if rs == nil {
		fmt.Println(diags)
		return
	}
	// The Storage server's documents come from Firestore; here, a map.
	users := storage.FirestoreLookupFunc(func(path string) (value.Map, bool, error) {
		if path == "users/alice" {
			return value.Map{"active": value.Bool(true)}, true, nil
		}
		return nil, false, nil
	})
	upload := &storage.Object{Name: "avatars/alice", Size: 2048, ContentType: "image/png"}
	for _, uid := range []string{"alice", "bob"} {
		d := rs.Decide(&storage.Request{
			Method:    storage.Create,
			Path:      "avatars/alice",
			Auth:      &storage.Auth{UID: uid},
			Incoming:  upload,
			Time:      time.Now(),
			Firestore: users,
			NoTrace:   true,
		})
		fmt.Println(uid, d.Outcome, d.Lookups)
	}
	// Output:
	// alice ALLOW 1
	// bob DENY 0
}
