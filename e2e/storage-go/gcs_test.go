// Package storagego drives pyric's Storage server with the official Go
// clients: cloud.google.com/go/storage v1.56.0 through STORAGE_EMULATOR_HOST
// and firebase-admin-go's storage through FIREBASE_STORAGE_EMULATOR_HOST.
package storagego

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/pyric/pyric/sandbox/service"
	srv "github.com/pyric/pyric/server/storage"
	"github.com/pyric/pyric/storage"
)

const bucket = "demo-pyric.appspot.com"

func start(t *testing.T) (*storage.Engine, string) {
	t.Helper()
	e, err := storage.New(service.Env{Project: "demo-pyric", DataDir: t.TempDir()}, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.NewHandler(e))
	t.Cleanup(ts.Close)
	return e, strings.TrimPrefix(ts.URL, "http://")
}

func client(t *testing.T, host string) *gcs.Client {
	t.Helper()
	// The form firebase-tools exports (the admin test covers host:port).
	t.Setenv("STORAGE_EMULATOR_HOST", "http://"+host)
	c, err := gcs.NewClient(context.Background(), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, ctx context.Context, o *gcs.ObjectHandle, data []byte, chunk int, attrs func(*gcs.Writer)) *gcs.ObjectAttrs {
	t.Helper()
	w := o.NewWriter(ctx)
	w.ChunkSize = chunk
	if attrs != nil {
		attrs(w)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("write %s: %v", o.ObjectName(), err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", o.ObjectName(), err)
	}
	return w.Attrs()
}

func TestGoClient(t *testing.T) {
	_, host := start(t)
	c := client(t, host)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := c.Bucket(bucket)

	// Small Writer (multipart).
	a := write(t, ctx, b.Object("dir/small.txt"), []byte("hello gcs"), 0, func(w *gcs.Writer) {
		w.ContentType = "text/plain"
		w.Metadata = map[string]string{"k": "v"}
		w.CacheControl = "no-cache"
	})
	if a.Size != 9 || a.ContentType != "text/plain" || a.Metadata["k"] != "v" || a.Generation == 0 || a.Metageneration != 1 || len(a.MD5) != 16 || a.CRC32C == 0 {
		t.Errorf("small attrs %+v", a)
	}

	// Chunked Writer (resumable, 256 KiB chunks) of 1 MiB + 17 bytes.
	big := bytes.Repeat([]byte("0123456789abcdef"), 65537)
	big = append(big, []byte("tail")...)
	ab := write(t, ctx, b.Object("dir/big.bin"), big, 256<<10, nil)
	if ab.Size != int64(len(big)) || ab.ContentType == "" {
		t.Errorf("big attrs size %d type %q", ab.Size, ab.ContentType)
	}

	// Reader: whole (checksum verified by the client) and ranges.
	r, err := b.Object("dir/big.bin").NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read big: %d bytes, %v", len(got), err)
	}
	if r.Attrs.Generation != ab.Generation || r.Attrs.Size != ab.Size {
		t.Errorf("reader attrs %+v", r.Attrs)
	}
	for _, rg := range []struct{ off, n int64 }{{10, 20}, {int64(len(big)) - 4, -1}, {-4, -1}, {0, 1}} {
		rr, err := b.Object("dir/big.bin").NewRangeReader(ctx, rg.off, rg.n)
		if err != nil {
			t.Fatalf("range %v: %v", rg, err)
		}
		got, err := io.ReadAll(rr)
		rr.Close()
		var want []byte
		switch {
		case rg.off < 0:
			want = big[int64(len(big))+rg.off:]
		case rg.n < 0:
			want = big[rg.off:]
		default:
			want = big[rg.off : rg.off+rg.n]
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("range %v: %q %v", rg, got, err)
		}
	}

	// Attrs and Update (null clears, metageneration moves, generation stays).
	oa, err := b.Object("dir/small.txt").Attrs(ctx)
	if err != nil || oa.CacheControl != "no-cache" {
		t.Fatalf("attrs %+v %v", oa, err)
	}
	ua, err := b.Object("dir/small.txt").Update(ctx, gcs.ObjectAttrsToUpdate{
		ContentType: "text/x", Metadata: map[string]string{"k2": "v2"}, CacheControl: "",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ua.ContentType != "text/x" || ua.Metageneration != 2 || ua.Generation != oa.Generation || ua.Metadata["k2"] != "v2" {
		t.Errorf("update %+v", ua)
	}

	// Preconditions.
	_, err = b.Object("dir/small.txt").If(gcs.Conditions{GenerationMatch: oa.Generation + 1}).Attrs(ctx)
	if code := httpCode(err); code != 412 {
		t.Errorf("read precondition: %v", err)
	}
	w := b.Object("dir/small.txt").If(gcs.Conditions{DoesNotExist: true}).NewWriter(ctx)
	w.Write([]byte("x"))
	if err := w.Close(); httpCode(err) != 412 {
		t.Errorf("DoesNotExist on an existing object: %v", err)
	}
	_, err = b.Object("dir/small.txt").If(gcs.Conditions{MetagenerationMatch: 2}).Update(ctx, gcs.ObjectAttrsToUpdate{ContentLanguage: "en"})
	if err != nil {
		t.Errorf("metageneration match: %v", err)
	}

	// Objects with Prefix/Delimiter and pagination.
	for i := 0; i < 5; i++ {
		write(t, ctx, b.Object("list/f"+string(rune('0'+i))), []byte("x"), 0, nil)
	}
	write(t, ctx, b.Object("list/sub/a"), []byte("x"), 0, nil)
	write(t, ctx, b.Object("list/sub/b"), []byte("x"), 0, nil)
	it := b.Objects(ctx, &gcs.Query{Prefix: "list/", Delimiter: "/"})
	var names []string
	for {
		oa, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if oa.Prefix != "" {
			names = append(names, "P:"+oa.Prefix)
		} else {
			names = append(names, oa.Name)
		}
	}
	if got := strings.Join(names, ","); got != "list/f0,list/f1,list/f2,list/f3,list/f4,P:list/sub/" {
		t.Errorf("objects: %s", got)
	}
	git := b.Objects(ctx, &gcs.Query{MatchGlob: "list/f[0-2]"})
	var globbed []string
	for {
		oa, err := git.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		globbed = append(globbed, oa.Name)
	}
	if got := strings.Join(globbed, ","); got != "list/f0,list/f1,list/f2" {
		t.Errorf("matchGlob: %s", got)
	}
	pager := iterator.NewPager(b.Objects(ctx, &gcs.Query{Prefix: "list/"}), 3, "")
	var all []string
	pages := 0
	for {
		var page []*gcs.ObjectAttrs
		tok, err := pager.NextPage(&page)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, o := range page {
			all = append(all, o.Name)
		}
		if tok == "" {
			break
		}
	}
	if len(all) != 7 || pages != 3 {
		t.Errorf("paged %d pages: %v", pages, all)
	}

	// Copier and a copy to another bucket.
	ca, err := b.Object("dir/copy.txt").CopierFrom(b.Object("dir/small.txt")).Run(ctx)
	if err != nil || ca.Size != 9 || ca.ContentType != "text/x" {
		t.Fatalf("copy %+v %v", ca, err)
	}
	other := c.Bucket("other-bucket")
	if _, err := other.Object("copied").CopierFrom(b.Object("dir/big.bin")).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if oa, err := other.Object("copied").Attrs(ctx); err != nil || oa.Size != int64(len(big)) {
		t.Errorf("copied attrs %+v %v", oa, err)
	}

	// Composer concatenates objects.
	comp := b.Object("dir/composed").ComposerFrom(b.Object("dir/small.txt"), b.Object("dir/small.txt"))
	comp.ContentType = "text/composed"
	if ca, err := comp.Run(ctx); err != nil || ca.Size != 18 || ca.ContentType != "text/composed" {
		t.Errorf("compose %+v %v", ca, err)
	}
	if r, err := b.Object("dir/composed").NewReader(ctx); err != nil {
		t.Error(err)
	} else if got, _ := io.ReadAll(r); string(got) != "hello gcshello gcs" {
		t.Errorf("composed bytes %q", got)
	}

	// Delete and ErrObjectNotExist on every path.
	if err := b.Object("dir/copy.txt").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Object("dir/copy.txt").Delete(ctx); !errors.Is(err, gcs.ErrObjectNotExist) {
		t.Errorf("delete missing: %v", err)
	}
	if _, err := b.Object("dir/copy.txt").Attrs(ctx); !errors.Is(err, gcs.ErrObjectNotExist) {
		t.Errorf("attrs missing: %v", err)
	}
	if _, err := b.Object("dir/copy.txt").NewReader(ctx); !errors.Is(err, gcs.ErrObjectNotExist) {
		t.Errorf("reader missing: %v", err)
	}
	if _, err := b.Object("nope").Update(ctx, gcs.ObjectAttrsToUpdate{ContentType: "a/b"}); !errors.Is(err, gcs.ErrObjectNotExist) {
		t.Errorf("update missing: %v", err)
	}

	// Bucket attrs and the bucket listing.
	if _, err := b.Attrs(ctx); err != nil {
		t.Errorf("bucket attrs: %v", err)
	}
	bit := c.Buckets(ctx, "demo-pyric")
	var bnames []string
	for {
		ba, err := bit.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		bnames = append(bnames, ba.Name)
	}
	if !strings.Contains(strings.Join(bnames, ","), "other-bucket") {
		t.Errorf("buckets %v", bnames)
	}
}

func httpCode(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}
