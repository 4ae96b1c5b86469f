package storage_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/storage"
)

func Example() {
	e, _ := storage.New(service.Env{Project: "demo-pyric"}, storage.Options{})
	e.SetRules("storage.rules", `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o/users/{uid}/{file=**} {
    allow read: if request.auth.uid == uid;
    allow write: if request.auth.uid == uid && request.resource.size < 1024;
  }
}`)
	alice := identity.NewUser("alice", nil)
	o, err := e.Put(alice, storage.PutRequest{Bucket: "demo-pyric.appspot.com", Name: "users/alice/hi.txt",
		MediaType: "text/plain", Body: strings.NewReader("hello")})
	fmt.Println(o.Size, o.ContentType, o.Metageneration, err)

	_, err = e.Put(identity.NewUser("bob", nil), storage.PutRequest{Bucket: "demo-pyric.appspot.com", Name: "users/alice/hi.txt", Body: strings.NewReader("x")})
	fmt.Println(storage.HTTPStatus(err))

	o, r, err := e.Open(alice, storage.ReadRequest{Bucket: "demo-pyric.appspot.com", Name: "users/alice/hi.txt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(io.NewSectionReader(r, 0, o.Size))
	r.Close()
	fmt.Println(string(b))

	res, _ := e.List(alice, storage.ListRequest{Bucket: "demo-pyric.appspot.com", Prefix: "users/alice/", Delimiter: "/"})
	fmt.Println(len(res.Items), res.Items[0].Name)
	// Output:
	// 5 text/plain 1 <nil>
	// 403
	// hello
	// 1 users/alice/hi.txt
}
