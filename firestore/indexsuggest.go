package firestore

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pyric/pyric/event"
)

// Suggestion is a composite index a session's queries need.
type Suggestion struct {
	Index IndexDef
	// Events are the ids of the events whose query needs it.
	Events []string
}

// SuggestIndexes derives, from the queries a recorded session ran
// (listener query targets, and list requests whose event carries the
// query), the composite indexes production would demand. Queries that do
// not compile are skipped.
func SuggestIndexes(events []event.Event) []Suggestion {
	byKey := map[string]*Suggestion{}
	var order []string
	for i := range events {
		ev := &events[i]
		if ev.Service != "firestore" {
			continue
		}
		var q any
		var coll string
		switch {
		case ev.Listener != nil && ev.Listener.Target != nil && ev.Listener.Target.Kind == "query" && ev.Listener.Phase == event.Attach:
			q, coll = ev.Listener.Target.Query, ev.Listener.Target.Path
		case ev.Request != nil && ev.Method == "list" && ev.Seen != nil && ev.Seen.Query != nil:
			q, coll = ev.Seen.Query, ev.Path
		default:
			continue
		}
		sq, err := RecordedQuery(q)
		if err != nil || sq == nil {
			continue
		}
		parent := ""
		if k := strings.LastIndex(strings.Trim(coll, "/"), "/"); k >= 0 {
			parent = strings.Trim(coll, "/")[:k]
		}
		def, needed, err := RequiredIndex(BranchDatabase, parent, sq)
		if err != nil || !needed {
			continue
		}
		key := indexKey(def)
		s := byKey[key]
		if s == nil {
			s = &Suggestion{Index: def}
			byKey[key] = s
			order = append(order, key)
		}
		s.Events = append(s.Events, ev.ID)
	}
	out := make([]Suggestion, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

func indexKey(d IndexDef) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s", d.CollectionGroup, d.QueryScope)
	for _, f := range d.Fields {
		fmt.Fprintf(&b, "|%s:%s:%s", f.FieldPath, f.Order, f.ArrayConfig)
	}
	return b.String()
}

// MergeIndexes adds the suggested indexes missing from existing (nil: an
// empty file). With prune, declared indexes that no suggestion names are
// removed; otherwise nothing is removed. It returns the merged config and
// the indexes added and removed.
func MergeIndexes(existing *IndexConfig, suggested []Suggestion, prune bool) (merged *IndexConfig, added, removed []IndexDef) {
	merged = &IndexConfig{Indexes: []IndexDef{}}
	if existing != nil {
		merged.FieldOverrides = existing.FieldOverrides
	}
	want := map[string]bool{}
	for _, s := range suggested {
		want[indexKey(normalize(s.Index))] = true
	}
	have := map[string]bool{}
	if existing != nil {
		for _, ix := range existing.Indexes {
			k := indexKey(normalize(ix))
			if prune && !want[k] {
				removed = append(removed, ix)
				continue
			}
			have[k] = true
			merged.Indexes = append(merged.Indexes, ix)
		}
	}
	for _, s := range suggested {
		k := indexKey(normalize(s.Index))
		if have[k] {
			continue
		}
		have[k] = true
		merged.Indexes = append(merged.Indexes, s.Index)
		added = append(added, s.Index)
	}
	sort.SliceStable(merged.Indexes, func(i, j int) bool {
		return merged.Indexes[i].CollectionGroup < merged.Indexes[j].CollectionGroup
	})
	return merged, added, removed
}

// normalize drops a trailing __name__ field and defaults the scope, so
// equal indexes written differently compare equal.
func normalize(d IndexDef) IndexDef {
	d.Fields = slices.Clone(d.Fields)
	if k := len(d.Fields); k > 0 && d.Fields[k-1].FieldPath == NameField {
		d.Fields = d.Fields[:k-1]
	}
	if d.QueryScope == "" {
		d.QueryScope = "COLLECTION"
	}
	return d
}
