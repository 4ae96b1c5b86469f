package storage_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pyric/pyric/storage"
)

// refList is the trivial reference: every name with the prefix, rolled up
// at the first delimiter after it, sorted and deduplicated.
func refList(names map[string]bool, prefix, delim string) (items, prefixes []string) {
	seen := map[string]bool{}
	for n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if delim != "" {
			if k := strings.Index(n[len(prefix):], delim); k >= 0 {
				p := n[:len(prefix)+k+len(delim)]
				if !seen[p] {
					seen[p] = true
					prefixes = append(prefixes, p)
				}
				continue
			}
		}
		items = append(items, n)
	}
	sort.Strings(items)
	sort.Strings(prefixes)
	return items, prefixes
}

// TestListModel compares random lists (prefix, delimiter, page size)
// against the reference over random names, paging to the end.
func TestListModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	e, _ := storage.New(envFor(t, false), storage.Options{})
	names := map[string]bool{}
	alphabet := []string{"a", "b", "/", "-", "é", "a/", "b/c"}
	for range 400 {
		var sb strings.Builder
		for range 1 + rng.IntN(6) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		n := sb.String()
		if storage.ValidateName(n) != nil {
			continue
		}
		if rng.IntN(5) == 0 && len(names) > 0 {
			// delete an existing one now and then
			for k := range names {
				if err := e.Delete(admin, bkt, k, storage.Conditions{}); err != nil {
					t.Fatal(err)
				}
				delete(names, k)
				break
			}
		}
		put(t, e, admin, n, n)
		names[n] = true
	}
	for trial := range 300 {
		prefix := []string{"", "a", "a/", "b", "b/c", "é", "/"}[rng.IntN(7)]
		delim := []string{"", "/", "-", "b/"}[rng.IntN(4)]
		page := 1 + rng.IntN(7)
		var items, prefixes []string
		tok := ""
		for {
			r, err := e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: prefix, Delimiter: delim, MaxResults: page, PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Items)+len(r.Prefixes) > page || (r.NextPageToken != "" && len(r.Items)+len(r.Prefixes) != page) {
				t.Fatalf("trial %d: page of %d with size %d", trial, len(r.Items)+len(r.Prefixes), page)
			}
			for _, o := range r.Items {
				items = append(items, o.Name)
			}
			prefixes = append(prefixes, r.Prefixes...)
			if r.NextPageToken == "" {
				break
			}
			tok = r.NextPageToken
		}
		wantItems, wantPrefixes := refList(names, prefix, delim)
		if !slices.Equal(items, wantItems) || !slices.Equal(prefixes, wantPrefixes) {
			t.Fatalf("trial %d list(%q, %q, %d):\n items %q\n want  %q\n prefixes %q\n want     %q", trial, prefix, delim, page, items, wantItems, prefixes, wantPrefixes)
		}
	}
}

// TestConcurrentModel runs writers, deleters, readers and listers at once
// (under -race); afterwards the engine holds exactly what the last
// acknowledged operation on each name left.
func TestConcurrentModel(t *testing.T) {
	t.Parallel()
	for _, disk := range []bool{false, true} {
		e, _ := storage.New(envFor(t, disk), storage.Options{})
		var mu sync.Mutex
		want := map[string]string{}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for i := range 150 {
					// each worker owns its names, so its own order is the truth
					name := fmt.Sprintf("w%d/%d", w, rng.IntN(20))
					switch rng.IntN(4) {
					case 0:
						if err := e.Delete(admin, bkt, name, storage.Conditions{}); err == nil {
							mu.Lock()
							delete(want, name)
							mu.Unlock()
						}
					case 1:
						e.List(admin, storage.ListRequest{Bucket: bkt, Prefix: fmt.Sprintf("w%d/", w), Delimiter: "/"})
						e.Stat(admin, storage.ReadRequest{Bucket: bkt, Name: name})
					default:
						data := fmt.Sprintf("%s@%d", name, i)
						if _, err := e.Put(admin, storage.PutRequest{Bucket: bkt, Name: name, Body: strings.NewReader(data)}); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						want[name] = data
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		r, err := e.List(admin, storage.ListRequest{Bucket: bkt})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Items) != len(want) {
			t.Errorf("disk=%v: %d objects, want %d", disk, len(r.Items), len(want))
		}
		for name, data := range want {
			if got := read(t, e, admin, name); got != data {
				t.Errorf("disk=%v %s: %q, want %q", disk, name, got, data)
			}
		}
	}
}
