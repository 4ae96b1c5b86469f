package auth

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestProvidersUnchangedIsApply: whenever put keeps an account's
// providers as they are (providersUnchanged), applying the upserts and
// deletions would have given the same list, nil or not; over random
// lists drawn from few ids and values, so that every case meets.
func TestProvidersUnchangedIsApply(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ids := []string{"password", "phone", "google.com"}
	info := func() ProviderUserInfo {
		return ProviderUserInfo{ProviderID: ids[r.IntN(len(ids))], RawID: []string{"a", "b"}[r.IntN(2)]}
	}
	list := func(max int) []ProviderUserInfo {
		n := r.IntN(max + 2)
		if n == max+1 {
			return nil
		}
		out := []ProviderUserInfo{}
		for range n {
			out = append(out, info())
		}
		return out
	}
	kept := 0
	for range 100_000 {
		cur, ups := list(3), list(2)
		var dels []string
		for range r.IntN(3) {
			dels = append(dels, ids[r.IntN(len(ids))])
		}
		if !providersUnchanged(cur, ups, dels) {
			continue
		}
		kept++
		got := applyProviders(cur, ups, dels)
		if !slices.Equal(got, cur) || (got == nil) != (cur == nil) {
			t.Fatalf("providers %v, upserts %v, deletes %v: kept as they are, but applying gives %v", cur, ups, dels, got)
		}
	}
	if kept < 1000 {
		t.Fatalf("only %d cases kept their providers", kept)
	}
}
