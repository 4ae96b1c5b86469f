package trigger

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
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
	value, err := documentProto(dn, name, c.After, c.CreateTime, c.UpdateTime)
	if err != nil {
		return nil, fmt.Errorf("trigger: %s after: %w", ev.Path, err)
	}
	old, err := documentProto(dn, name, c.Before, c.BeforeCreateTime, c.BeforeUpdateTime)
	if err != nil {
		return nil, fmt.Errorf("trigger: %s before: %w", ev.Path, err)
	}
	var mask *pb.DocumentMask
	if o == opUpdate {
		mask = &pb.DocumentMask{FieldPaths: changedFields(c.Before, c.After)}
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
		// Production's data: the DocumentEventData protobuf, in the
		// CloudEvents JSON form's data_base64 (firebase-functions decodes
		// it; its snapshots have no readTime, as in production).
		body["datacontenttype"] = "application/protobuf"
		body["data_base64"] = base64.StdEncoding.EncodeToString(documentEventData(value, old, mask))
	} else {
		// The legacy event: the documents in the REST JSON form, empty
		// objects for an absent side.
		data := map[string]any{"value": map[string]any{}, "oldValue": map[string]any{}, "updateMask": map[string]any{}}
		for k, d := range map[string]*pb.Document{"value": value, "oldValue": old} {
			if d != nil {
				j, err := protojson.Marshal(d)
				if err != nil {
					return nil, fmt.Errorf("trigger: %s: %w", ev.Path, err)
				}
				data[k] = json.RawMessage(j)
			}
		}
		if mask != nil {
			data["updateMask"] = map[string]any{"fieldPaths": mask.FieldPaths}
		}
		body = map[string]any{"data": data, "context": legacyContext(env, f, name, t, params)}
	}
	p, err := marshal(body)
	if err != nil {
		return nil, err
	}
	return []Delivery{{Function: f.ID, Params: params, Payload: p}}, nil
}

// documentEventData is google.events.cloud.firestore.v1.DocumentEventData
// in the protobuf wire format: value (1), old_value (2) and update_mask
// (3), whose Document, Value and DocumentMask messages have the Firestore
// API's field numbers and types, so the API's messages encode them.
func documentEventData(value, old *pb.Document, mask *pb.DocumentMask) []byte {
	var b []byte
	for _, f := range []struct {
		num protowire.Number
		m   proto.Message
	}{{1, value}, {2, old}, {3, mask}} {
		if reflect.ValueOf(f.m).IsNil() {
			continue
		}
		enc, _ := proto.MarshalOptions{Deterministic: true}.Marshal(f.m)
		b = protowire.AppendTag(b, f.num, protowire.BytesType)
		b = protowire.AppendBytes(b, enc)
	}
	return b
}

// documentProto is a document as the Firestore API's message (fields as
// typed values); nil when fields is nil (absent).
func documentProto(dn firestore.DatabaseName, name string, fields any, create, update time.Time) (*pb.Document, error) {
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
	return d, nil
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
