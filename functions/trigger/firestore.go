package trigger

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore"
)

const defaultDatabase = "(default)"

// firestoreMatch says whether f watches the document at path in db, and
// with which params.
func firestoreMatch(f Function, env Env, db, path string) (map[string]string, bool) {
	segs := splitPath(path)
	if kindOf(f.EventType) == kindFirestoreV2 {
		if want := f.EventFilters["database"]; want != "" && want != db {
			return nil, false
		}
		if want := f.EventFilters["namespace"]; want != "" && want != defaultDatabase {
			return nil, false // pyric has no Datastore namespaces
		}
		if doc, ok := f.EventFilters["document"]; ok {
			if strings.Join(splitPath(doc), "/") != path {
				return nil, false
			}
			return map[string]string{}, true
		}
		pat, ok := f.EventFilterPathPatterns["document"]
		if !ok {
			return nil, false
		}
		return compiled(pat).Match(segs)
	}
	// v1: projects/P/databases/D/documents/PATH (no @namespace support).
	res := splitPath(f.EventFilters["resource"])
	if len(res) < 6 || res[0] != "projects" || res[2] != "databases" || res[4] != "documents" {
		return nil, false
	}
	if (res[1] != env.Project && res[1] != "_") || res[3] != db {
		return nil, false
	}
	return compiled(strings.Join(res[5:], "/")).Match(segs)
}

func firestoreOp(c *event.Commit) (op, bool) {
	switch {
	case c.Before == nil && c.After == nil:
		return 0, false
	case c.Before == nil:
		return opCreate, true
	case c.After == nil:
		return opDelete, true
	}
	return opUpdate, true
}

func firestoreDeliveries(f Function, ev event.Event, env Env) ([]Delivery, error) {
	c := ev.Commit
	if ev.Service != "firestore" || ev.Kind != event.KindCommit || c == nil {
		return nil, nil
	}
	o, ok := firestoreOp(c)
	if !ok || !fires(action(f.EventType), o) {
		return nil, nil
	}
	db := c.Database
	if db == "" {
		db = defaultDatabase
	}
	params, ok := firestoreMatch(f, env, db, ev.Path)
	if !ok {
		return nil, nil
	}
	dn := firestore.DatabaseName{Project: env.Project, Database: db}
	name := dn.DocName(ev.Path)
	value, err := restDocument(dn, name, c.After, c.CreateTime, c.UpdateTime)
	if err != nil {
		return nil, fmt.Errorf("trigger: %s after: %w", ev.Path, err)
	}
	old, err := restDocument(dn, name, c.Before, c.BeforeCreateTime, c.BeforeUpdateTime)
	if err != nil {
		return nil, fmt.Errorf("trigger: %s before: %w", ev.Path, err)
	}
	data := map[string]any{}
	if value != nil {
		data["value"] = value
	}
	if old != nil {
		data["oldValue"] = old
	}
	if o == opUpdate {
		data["updateMask"] = map[string]any{"fieldPaths": changedFields(c.Before, c.After)}
	}
	t := eventTime(ev)
	var body map[string]any
	if kindOf(f.EventType) == kindFirestoreV2 {
		// production's source; the Emulator Suite writes projects/projects/….
		body = cloudEvent(env, f.EventType, "//firestore.googleapis.com/"+dn.String(), "documents/"+ev.Path, t)
		body["project"], body["location"], body["database"], body["namespace"], body["document"] = env.Project, f.Region, db, defaultDatabase, ev.Path
		if strings.HasSuffix(f.EventType, withAuthContext) {
			at, aid := authContext(ev.Identity, "service_account")
			body["authtype"] = at
			if aid != "" {
				body["authid"] = aid
			}
		}
		body["data"] = data
	} else {
		// The legacy event carries empty objects for an absent side.
		for _, k := range []string{"value", "oldValue", "updateMask"} {
			if _, ok := data[k]; !ok {
				data[k] = map[string]any{}
			}
		}
		body = map[string]any{"data": data, "context": legacyContext(env, f, name, t, params)}
	}
	p, err := marshal(body)
	if err != nil {
		return nil, err
	}
	return []Delivery{{Function: f.ID, Params: params, Payload: p}}, nil
}

// restDocument is a document in the Firestore REST JSON form (fields as
// typed values, times in RFC 3339) that firebase-functions decodes with
// datacontenttype application/json; nil when fields is nil (absent).
func restDocument(dn firestore.DatabaseName, name string, fields any, create, update time.Time) (json.RawMessage, error) {
	if fields == nil {
		return nil, nil
	}
	m, ok := fields.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("fields are %T, not an object", fields)
	}
	fs, err := firestore.DecodeFields(m, dn)
	if err != nil {
		return nil, err
	}
	d := &pb.Document{Name: name, Fields: fs}
	if !create.IsZero() {
		d.CreateTime = timestamppb.New(create)
	}
	if !update.IsZero() {
		d.UpdateTime = timestamppb.New(update)
	}
	return protojson.Marshal(d)
}

// changedFields lists the field paths whose values differ between two
// versions of a document, descending into maps present on both sides, in
// sorted order: the update mask of an update event.
func changedFields(before, after any) []string {
	out := []string{}
	var walk func(prefix string, b, a map[string]any)
	walk = func(prefix string, b, a map[string]any) {
		keys := slices.Sorted(maps.Keys(b))
		for k := range a {
			if _, ok := b[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			bv, bok := b[k]
			av, aok := a[k]
			p := fieldPathSegment(k)
			if prefix != "" {
				p = prefix + "." + p
			}
			bm, bIsMap := bv.(map[string]any)
			am, aIsMap := av.(map[string]any)
			switch {
			case bok && aok && bIsMap && aIsMap && !isMarker(bm) && !isMarker(am):
				walk(p, bm, am)
			case bok != aok || !reflect.DeepEqual(bv, av):
				out = append(out, p)
			}
		}
	}
	b, _ := before.(map[string]any)
	a, _ := after.(map[string]any)
	walk("", b, a)
	return out
}

// isMarker reports whether a JSON-form map is a typed value (timestamp,
// bytes, …) rather than a Firestore map.
func isMarker(m map[string]any) bool {
	_, t := m["__type"]
	_, v := m["__type__"]
	return t || v
}

// fieldPathSegment quotes a field name that is not a simple identifier,
// as Firestore writes field paths.
func fieldPathSegment(k string) string {
	simple := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			simple = false
			break
		}
	}
	if simple {
		return k
	}
	return "`" + strings.NewReplacer("\\", "\\\\", "`", "\\`").Replace(k) + "`"
}
