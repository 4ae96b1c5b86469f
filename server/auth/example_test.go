package authserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/event"
	authserver "github.com/pyric/pyric/server/auth"
)

// Mount the Auth endpoints on a server, sign a user up through the REST API
// (as the JS SDK does), and persist the accounts with a snapshot.
func Example() {
	bus := event.NewBus(event.Options{})
	eng := auth.New(auth.Options{Events: bus})
	srv := httptest.NewServer(authserver.New(eng, authserver.Options{DefaultProject: "demo-app"}))
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any",
		"application/json", strings.NewReader(`{"email":"ada@example.com","password":"secret123"}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)

	snap, _ := eng.MarshalSnapshot()
	restored := auth.New(auth.Options{})
	if err := restored.UnmarshalSnapshot(snap); err != nil {
		panic(err)
	}
	for _, u := range restored.Users("demo-app", "") {
		fmt.Println(u.Email)
	}
	for _, e := range bus.History() {
		fmt.Println(e.Kind, e.Service, e.Op)
	}
	// Output:
	// 200
	// ada@example.com
	// mutation auth user_create
	// mutation auth sign_in
}
