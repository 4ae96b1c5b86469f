package fstest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/server/firestore/fstest"
)

func TestStart(t *testing.T) {
	t.Parallel()
	srv := fstest.Start(t, fstest.Options{})
	ctx := context.Background()
	c := srv.Client(t)
	if _, err := c.Doc("cities/SF").Set(ctx, map[string]any{"name": "San Francisco"}); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Doc("cities/SF").Get(ctx)
	if err != nil || snap.Data()["name"] != "San Francisco" {
		t.Fatalf("get: %v %v", snap, err)
	}
	// The same port answers HTTP/1.1.
	resp, err := http.Get("http://" + srv.Addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The admin plane of the sandbox sees the write.
	if d, _ := testfs.Of(srv.Sandbox).Admin().GetDocument(ctx, "cities/SF"); d["name"] != "San Francisco" {
		t.Errorf("sandbox: %v", d)
	}
}
