package firestore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// BranchDatabase is the database name branches use for documents
// (references in the JSON form are relative to it).
var BranchDatabase = DatabaseName{Project: "demo-verify", Database: "(default)"}

// Branch is a fork of a Firestore state with its own rules: writes
// applied to it are decided by those rules, and it can be diffed against
// another state. It is the mechanism behind Firestore's replay (Replay,
// Branch.Apply: verify) and the Studio's "re-run against edited rules" of
// a whole session. A Branch is not safe for concurrent use.
type Branch struct {
	rules Rules
	docs  map[string]*pb.Document
}

// Fork returns a branch of docs (relative path → fields in the JSON form
// with typed markers) decided by rules (nil: NoRules).
func Fork(docs map[string]map[string]any, rules Rules) (*Branch, error) {
	if rules == nil {
		rules = NoRules{}
	}
	b := &Branch{rules: rules, docs: make(map[string]*pb.Document, len(docs))}
	for p, fields := range docs {
		if err := b.Put(p, fields); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Put sets a document as the admin would (rules are not consulted); nil
// fields delete it.
func (b *Branch) Put(path string, fields map[string]any) error {
	path = strings.Trim(path, "/")
	if fields == nil {
		delete(b.docs, path)
		return nil
	}
	f, err := DecodeFields(fields, BranchDatabase)
	if err != nil {
		return fmt.Errorf("document %s: %w", path, err)
	}
	b.docs[path] = &pb.Document{Name: BranchDatabase.DocName(path), Fields: f}
	return nil
}

// Get returns a document (nil when absent).
func (b *Branch) Get(path string) *pb.Document { return b.docs[strings.Trim(path, "/")] }

// Docs returns the branch's documents in the JSON form.
func (b *Branch) Docs() map[string]map[string]any {
	out := make(map[string]map[string]any, len(b.docs))
	for p, d := range b.docs {
		out[p] = EncodeFields(d.Fields, BranchDatabase)
	}
	return out
}

// clear empties the branch (a session reset).
func (b *Branch) clear() { b.docs = map[string]*pb.Document{} }

// Len is the number of documents.
func (b *Branch) Len() int { return len(b.docs) }

func (b *Branch) lookup(path string) (*pb.Document, error) {
	return b.docs[strings.Trim(path, "/")], nil
}

// BranchRequest is one client request to decide on a branch.
type BranchRequest struct {
	Method string // get, list, create, update, delete
	Path   string
	Who    identity.Identity
	Time   time.Time
	// After is the document after a create or update (fields in the JSON
	// form); nil for reads and deletes.
	After map[string]any
	// GetAfter, when set, is the state after the whole batch for
	// getAfter()/existsAfter().
	GetAfter map[string]map[string]any
	Group    *event.Group
	// Query is a list request's query (request.query, and the filters
	// "rules are not filters" proves against); Path is then the queried
	// collection path, as events record it.
	Query *pb.StructuredQuery
}

// Decide decides a request against the branch's state without applying
// it.
func (b *Branch) Decide(r BranchRequest) (AuthzDecision, error) {
	d, _, err := b.decide(r)
	return d, err
}

// decide also returns the decoded document after the write.
func (b *Branch) decide(r BranchRequest) (AuthzDecision, *pb.Document, error) {
	path := strings.Trim(r.Path, "/")
	req := &AuthzRequest{Database: BranchDatabase, Method: Method(r.Method), Path: path, Auth: r.Who,
		Time: r.Time, Get: b.lookup}
	if r.Method != "list" {
		req.Resource = b.docs[path]
	} else if sq := r.Query; sq != nil && len(sq.From) == 1 {
		parent := ""
		if k := strings.LastIndex(path, "/"); k >= 0 {
			parent = path[:k]
		}
		q := &QueryInfo{Parent: parent, CollectionID: sq.From[0].CollectionId, AllDescendants: sq.From[0].AllDescendants,
			Where: sq.Where, OrderBy: sq.OrderBy, Offset: sq.Offset, Structured: sq}
		if sq.Limit != nil {
			n := sq.Limit.Value
			q.Limit = &n
		}
		req.Query = q
	}
	if r.After != nil {
		f, err := DecodeFields(r.After, BranchDatabase)
		if err != nil {
			return AuthzDecision{}, nil, fmt.Errorf("request data: %w", err)
		}
		req.After = &pb.Document{Name: BranchDatabase.DocName(path), Fields: f, UpdateTime: timestamppb.New(r.Time)}
	}
	if r.Group != nil {
		req.Group = &Group{ID: r.Group.ID, Kind: string(r.Group.Kind)}
	}
	if r.Method == "create" || r.Method == "update" || r.Method == "delete" {
		overlay := r.GetAfter
		req.GetAfter = func(p string) (*pb.Document, error) {
			p = strings.Trim(p, "/")
			if p == path {
				return req.After, nil
			}
			if overlay != nil {
				if f, ok := overlay[p]; ok {
					if f == nil {
						return nil, nil
					}
					fs, err := DecodeFields(f, BranchDatabase)
					if err != nil {
						return nil, err
					}
					return &pb.Document{Name: BranchDatabase.DocName(p), Fields: fs}, nil
				}
			}
			return b.docs[p], nil
		}
	}
	return b.rules.Authorize(context.Background(), req), req.After, nil
}

// putDoc stores an already decoded document (nil deletes).
func (b *Branch) putDoc(path string, d *pb.Document) {
	path = strings.Trim(path, "/")
	if d == nil {
		delete(b.docs, path)
		return
	}
	b.docs[path] = &pb.Document{Name: d.Name, Fields: d.Fields}
}

// Write decides a write and, when allowed, applies it (After for create
// and update, deletion for delete).
func (b *Branch) Write(r BranchRequest) (AuthzDecision, error) {
	d, err := b.Decide(r)
	if err != nil || d.Verdict != Allow {
		return d, err
	}
	if r.Method == "delete" {
		return d, b.Put(r.Path, nil)
	}
	return d, b.Put(r.Path, r.After)
}

// BranchChange is one difference between two states.
type BranchChange struct {
	// Path is the document path, or document path and field path for a
	// field difference ("posts/p1 title", "posts/p1 tags[0]").
	Path string `json:"path"`
	Doc  string `json:"doc"`
	// Field is the leaf path within the document ("" for presence).
	Field  string `json:"field,omitempty"`
	Before any    `json:"before"` // in want (nil: absent)
	After  any    `json:"after"`  // in the branch (nil: absent)
}

// Diff compares the branch with want (relative path → fields): every
// document present on one side only, and every differing leaf.
func (b *Branch) Diff(want map[string]map[string]any) []BranchChange {
	var out []BranchChange
	for _, p := range service.UnionKeys(b.docs, want) {
		d, gok := b.docs[p]
		w, wok := want[p]
		if gok && wok {
			// Fast path: equal documents need no leaf walk.
			if wf, err := DecodeFields(w, BranchDatabase); err == nil && proto.Equal(&pb.MapValue{Fields: wf}, &pb.MapValue{Fields: d.Fields}) {
				continue
			}
		}
		var g map[string]any
		if gok {
			g = EncodeFields(d.Fields, BranchDatabase)
		}
		switch {
		case !gok:
			out = append(out, BranchChange{Path: p, Doc: p, Before: canonical(w), After: nil})
		case !wok:
			out = append(out, BranchChange{Path: p, Doc: p, Before: nil, After: canonical(g)})
		default:
			diffLeaves(p, "", canonical(w), canonical(g), &out)
		}
	}
	return out
}

// canonical normalises a JSON-form value (native ints, json.Number) to
// one representation by a JSON round trip with exact numbers.
func canonical(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

func diffLeaves(doc, at string, want, got any, out *[]BranchChange) {
	wm, wIsMap := want.(map[string]any)
	gm, gIsMap := got.(map[string]any)
	if wIsMap && gIsMap && !isMarker(wm) && !isMarker(gm) {
		for _, k := range service.UnionKeys(wm, gm) {
			p := k
			if at != "" {
				p = at + "." + k
			}
			wv, wok := wm[k]
			gv, gok := gm[k]
			if !wok || !gok {
				*out = append(*out, BranchChange{Path: doc + " " + p, Doc: doc, Field: p, Before: orAbsent(wv, wok), After: orAbsent(gv, gok)})
				continue
			}
			diffLeaves(doc, p, wv, gv, out)
		}
		return
	}
	wa, wIsArr := want.([]any)
	ga, gIsArr := got.([]any)
	if wIsArr && gIsArr && len(wa) == len(ga) {
		for i := range wa {
			diffLeaves(doc, fmt.Sprintf("%s[%d]", at, i), wa[i], ga[i], out)
		}
		return
	}
	if !service.SameJSON(want, got) {
		*out = append(*out, BranchChange{Path: strings.TrimSpace(doc + " " + at), Doc: doc, Field: at, Before: want, After: got})
	}
}

func orAbsent(v any, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

func isMarker(m map[string]any) bool {
	_, a := m["__type"]
	_, b := m["__type__"]
	return a || b
}

// Fork forks the default database's live state with rules (nil:
// NoRules).
func (s *Service) Fork(rules Rules) (*Branch, error) {
	db := s.Default()
	docs := map[string]map[string]any{}
	for _, d := range s.Dump(db) {
		docs[strings.TrimPrefix(d.Name, db.Documents()+"/")] = EncodeFields(d.Fields, db)
	}
	return Fork(docs, rules)
}

// Apply re-issues a session's (or the live history's) Firestore writes on
// the branch in order, decided by the branch's rules (admin writes bypass
// them), and reports how each request's verdict compares to the recorded
// one. It is Replay without the final-state diff.
func (b *Branch) Apply(events []event.Event) (*service.Report, error) {
	return replayOn(b, events, nil)
}

// Promote writes every document that differs between br and the default
// database onto the database as the admin (deleting those br lacks), and
// returns the changes it made.
func (s *Service) Promote(ctx context.Context, br *Branch) ([]BranchChange, error) {
	live, err := s.Fork(nil)
	if err != nil {
		return nil, err
	}
	changes := br.Diff(live.Docs())
	adm := s.Admin()
	done := map[string]bool{}
	for _, c := range changes {
		if done[c.Doc] {
			continue
		}
		done[c.Doc] = true
		d := br.docs[c.Doc]
		if d == nil {
			if _, err := adm.DeleteDocument(ctx, c.Doc); err != nil {
				return nil, err
			}
			continue
		}
		if err := adm.SetDocument(ctx, c.Doc, EncodeFields(d.Fields, BranchDatabase)); err != nil {
			return nil, err
		}
	}
	return changes, nil
}
