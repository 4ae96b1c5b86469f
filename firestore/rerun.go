package firestore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// Rerun implements service.Rerunner: it decides a recorded request of
// the default database again, as r.As and under r.Rules (empty: the live
// rules), without changing any state or emitting any event. The rules see
// exactly what they saw (RecordedRequest), so a re-run with the same
// rules and identity reproduces the recorded verdict.
func (s *Service) Rerun(ctx context.Context, r service.RerunRequest) (*service.Rerun, error) {
	name, text := "firestore.rules", r.Rules
	if text == "" {
		var loaded bool
		if name, text, loaded = s.Engine.LiveRules().Base(); !loaded {
			return nil, &service.ErrRerun{Msg: "no firestore.rules are loaded: post the rules to re-run against as source"}
		}
	}
	gate, diags := NewRulesGate(source.NewFile(name, text))
	if gate == nil || diags.HasErrors() {
		return nil, &service.RulesError{File: name, Diags: diags}
	}
	who := identity.Anonymous()
	if r.As.Lens == event.LensUser {
		who = identity.NewUser(r.As.UID, r.As.Token)
	}
	// (Admin is refused by the caller: it bypasses rules.)
	req, notes, err := s.Engine.RecordedRequest(s.def, &r.Event, who)
	if err != nil {
		return nil, &service.ErrRerun{Msg: err.Error()}
	}
	d := gate.AuthorizeTraced(ctx, req)
	out := &service.Rerun{Verdict: d.Verdict, Reason: d.Reason, Notes: *notes}
	if exp, ok := d.Explained(); ok {
		out.Rule, out.Trace, out.Decision = exp.Rule, exp.Trace, exp.Decision
		if out.Verdict != event.Allow {
			out.Explanation = d.Lines()
		}
	}
	return out, nil
}

// RecordedRequest rebuilds the rules request of a recorded request event
// of database db exactly as the rules saw it: request.time, resource,
// request.resource (transforms applied) and the query from what the event
// recorded, and get()/exists() (getAfter()/existsAfter()) answered from
// the documents the decision read. A document the recorded decision did
// not read (other rules reading more) is read from the state as of the
// request, while the database still keeps that version, else from the
// current state; the notes say which. The notes grow while the request is
// decided (lookups happen then). Nothing is emitted.
func (e *Engine) RecordedRequest(db DatabaseName, ev *event.Event, who identity.Identity) (*AuthzRequest, *[]string, error) {
	seen := ev.Seen
	if seen == nil {
		seen = &event.Seen{}
	}
	req := &AuthzRequest{Database: db, Method: Method(ev.Method), Path: ev.Path, Auth: who, Time: seen.Time}
	if req.Time.IsZero() {
		req.Time = ev.At
	}
	if ev.Group != nil {
		req.Group = &Group{ID: ev.Group.ID, Kind: string(ev.Group.Kind)}
	}
	notes := &[]string{}
	recorded := map[string]map[string]*pb.Document{"get": {}, "getAfter": {}}
	for _, l := range seen.Lookups {
		var doc *pb.Document
		if l.Exists {
			fields, err := DecodeFields(asMap(l.Data), db)
			if err != nil {
				return nil, nil, fmt.Errorf("recorded lookup %s: %w", l.Path, err)
			}
			doc = &pb.Document{Name: db.DocName(l.Path), Fields: fields}
		}
		if m := recorded[l.Function]; m != nil {
			m[l.Path] = doc
		}
	}
	// State as of the request: a write's rules read the state before its
	// commit (request.time is the commit time).
	at := req.Time
	if req.Method == MethodCreate || req.Method == MethodUpdate || req.Method == MethodDelete {
		at = at.Add(-time.Microsecond)
	}
	stateAt := func(p string) (*pb.Document, error) {
		if err := ValidateDocumentPath(p); err != nil {
			return nil, err
		}
		c := consistency{}
		if !at.IsZero() {
			c.readTime = timestamppb.New(at.Truncate(time.Microsecond))
		}
		d, err := e.docAt(db, p, c)
		if err != nil && c.readTime != nil {
			*notes = append(*notes, fmt.Sprintf("%s was read from the current state: the version as of the request is no longer kept (%v)", p, err))
			return e.docAt(db, p, consistency{})
		} else if err == nil {
			*notes = append(*notes, fmt.Sprintf("%s was not read by the recorded decision: read from the state as of the request", p))
		}
		return d, err
	}
	req.Get = func(p string) (*pb.Document, error) {
		if d, ok := recorded["get"][p]; ok {
			return d, nil
		}
		return stateAt(p)
	}
	if req.Group != nil || len(recorded["getAfter"]) > 0 || req.Method == MethodCreate || req.Method == MethodUpdate || req.Method == MethodDelete {
		req.GetAfter = func(p string) (*pb.Document, error) {
			if d, ok := recorded["getAfter"][p]; ok {
				return d, nil
			}
			*notes = append(*notes, fmt.Sprintf("getAfter(%s) was not recorded: the other writes of the batch are not replayed", p))
			return req.Get(p)
		}
	}
	if seen.Before != nil && seen.Before.Exists {
		fields, err := recordedFields(seen.Before.Data, db)
		if err != nil {
			return nil, nil, fmt.Errorf("recorded resource: %w", err)
		}
		req.Resource = &pb.Document{Name: db.DocName(ev.Path), Fields: fields}
	}
	switch req.Method {
	case MethodGet, MethodDelete:
	case MethodCreate, MethodUpdate:
		if seen.After != nil {
			fields, err := DecodeFields(asMap(seen.After.Data), db)
			if err != nil {
				return nil, nil, fmt.Errorf("recorded request.resource: %w", err)
			}
			req.After = &pb.Document{Name: db.DocName(ev.Path), Fields: fields}
			break
		}
		// An event recorded before request.resource was: rebuild it from
		// the stored resource and the data sent (transforms left out).
		*notes = append(*notes, "request.resource was not recorded: rebuilt from the resource and the data sent, without transforms")
		after := map[string]*pb.Value{}
		if req.Resource != nil && req.Method == MethodUpdate {
			for k, v := range req.Resource.Fields {
				after[k] = v
			}
		}
		fields, err := recordedFields(seen.Data, db)
		if err != nil {
			return nil, nil, fmt.Errorf("recorded request data: %w", err)
		}
		for k, v := range fields {
			after[k] = v
		}
		req.After = &pb.Document{Name: db.DocName(ev.Path), Fields: after}
	case MethodList:
		q, err := RecordedQuery(seen.Query)
		if err != nil {
			return nil, nil, fmt.Errorf("recorded query: %w", err)
		}
		if q == nil {
			q = &pb.StructuredQuery{}
		}
		parent, id := "", ev.Path
		if i := strings.LastIndexByte(ev.Path, '/'); i >= 0 {
			parent, id = ev.Path[:i], ev.Path[i+1:]
		}
		qi := &QueryInfo{Parent: parent, CollectionID: id, Structured: q,
			Where: q.GetWhere(), OrderBy: q.GetOrderBy(), Offset: q.GetOffset()}
		if from := q.GetFrom(); len(from) == 1 && from[0].GetAllDescendants() {
			qi.AllDescendants = true
		}
		if l := q.GetLimit(); l != nil {
			v := l.GetValue()
			qi.Limit = &v
		}
		req.Query = qi
	default:
		return nil, nil, fmt.Errorf("cannot re-run method %q", ev.Method)
	}
	return req, notes, nil
}

// docAt reads one document (nil: missing) at c, without rules or events.
func (e *Engine) docAt(name DatabaseName, rel string, c consistency) (*pb.Document, error) {
	db := e.db(name)
	unlock := db.readLock()
	defer unlock()
	v, err := db.view(c)
	if err != nil {
		return nil, err
	}
	return v.doc(db, rel), nil
}

// RecordedQuery reads a query as events carry it: a *pb.StructuredQuery
// in memory, its protojson form after a fixture round trip (nil: none).
func RecordedQuery(v any) (*pb.StructuredQuery, error) {
	switch x := v.(type) {
	case *pb.StructuredQuery:
		return x, nil
	case proto.Message:
		return nil, fmt.Errorf("query is a %T", v)
	case nil:
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	sq := &pb.StructuredQuery{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, sq); err != nil {
		return nil, err
	}
	return sq, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// recordedFields decodes recorded JSON-form data, leaving out sentinel
// markers (their values are resolved at commit time and not recorded).
func recordedFields(data any, db DatabaseName) (map[string]*pb.Value, error) {
	m, ok := data.(map[string]any)
	if !ok || m == nil {
		return map[string]*pb.Value{}, nil
	}
	clean := make(map[string]any, len(m))
	for k, v := range m {
		if mv, ok := v.(map[string]any); ok {
			if _, sentinel := mv["__sentinel"]; sentinel {
				continue
			}
		}
		clean[k] = v
	}
	return DecodeFields(clean, db)
}
