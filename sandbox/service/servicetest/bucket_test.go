package servicetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/pyric/pyric/sandbox/service"
)

func TestBucketTransactions(t *testing.T) {
	b := NewBucket()
	put := func(tx service.Tx, k, v string) {
		if err := tx.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Update(func(tx service.Tx) error {
		put(tx, "a/2", "two")
		put(tx, "a/1", "one")
		put(tx, "b/1", "other")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A failing Update rolls back every write, deletes included.
	boom := errors.New("boom")
	if err := b.Update(func(tx service.Tx) error {
		put(tx, "a/1", "changed")
		put(tx, "a/3", "new")
		tx.Delete([]byte("b/1"))
		tx.DeletePrefix([]byte("a/2"))
		return boom
	}); err != boom {
		t.Fatalf("update error %v", err)
	}
	// An injected failure runs nothing.
	b.FailNextUpdate()
	ran := false
	if err := b.Update(func(service.Tx) error { ran = true; return nil }); !errors.Is(err, ErrInjected) || ran {
		t.Fatalf("injected: %v, ran %v", err, ran)
	}
	var seen []string
	b.View(func(tx service.Tx) error {
		if err := tx.Put([]byte("x"), nil); !errors.Is(err, ErrReadOnly) {
			t.Errorf("put in View: %v", err)
		}
		return tx.ForEach([]byte("a/"), func(k, v []byte) error {
			seen = append(seen, string(k)+"="+string(v))
			return nil
		})
	})
	if strings.Join(seen, ",") != "a/1=one,a/2=two" || b.Len() != 3 || b.Updates() != 1 {
		t.Fatalf("after rollback: %v, %d keys, %d updates", seen, b.Len(), b.Updates())
	}
}
