package discover

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/firestore"
)

func wrapInt(n int) *wrapperspb.Int32Value { return wrapperspb.Int32(int32(n)) }

// DefaultGroupLimit is FindCollectionGroup's default read limit.
const DefaultGroupLimit = 100

// GroupHost is one template path a collection id lives at.
type GroupHost struct {
	TemplatePath   string `json:"templatePath"`
	SampleDocCount int    `json:"sampleDocCount"`
}

// GroupResult is FindCollectionGroup's answer. LimitWasReached means more
// hosts may exist beyond the documents read.
type GroupResult struct {
	Hosts           []GroupHost `json:"hosts"`
	Reads           int         `json:"reads"`
	LimitWasReached bool        `json:"limitWasReached"`
}

// FindCollectionGroup finds every template path where collections with
// the id live, with one names-only collection-group query of at most
// limit documents.
func FindCollectionGroup(ctx context.Context, src GroupSource, collectionID string, limit int) (*GroupResult, error) {
	if err := firestore.ValidateCollectionID(collectionID); err != nil {
		return nil, fmt.Errorf("%w: collectionId: %v", ErrInvalidOptions, err)
	}
	if limit == 0 {
		limit = DefaultGroupLimit
	}
	if limit < 1 || limit > 10000 {
		return nil, fmt.Errorf("%w: limit must be between 1 and 10000, got %d", ErrInvalidOptions, limit)
	}
	docs, err := src.CollectionGroupDocs(ctx, collectionID, limit)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("collection group %s", collectionID), err)
	}
	counts := map[string]int{}
	for _, d := range docs {
		counts[TemplatePath(parentCollectionOfDoc(d))]++
	}
	res := &GroupResult{Hosts: []GroupHost{}, Reads: len(docs), LimitWasReached: len(docs) == limit}
	for tp, n := range counts {
		res.Hosts = append(res.Hosts, GroupHost{TemplatePath: tp, SampleDocCount: n})
	}
	sort.Slice(res.Hosts, func(i, j int) bool { return res.Hosts[i].TemplatePath < res.Hosts[j].TemplatePath })
	return res, nil
}

func parentCollectionOfDoc(doc string) string {
	for i := len(doc) - 1; i >= 0; i-- {
		if doc[i] == '/' {
			return doc[:i]
		}
	}
	return doc
}
