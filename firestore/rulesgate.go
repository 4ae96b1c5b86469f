package firestore

import (
	"context"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/coverage"
	fsrules "github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// RulesGate decides requests with a compiled firestore.rules: it is the
// engine's Rules backed by the rules language engine.
type RulesGate struct {
	rs *fsrules.Ruleset
}

// NewRulesGate compiles rules source for the engine. It returns the
// diagnostics (with positions) when the rules don't compile.
func NewRulesGate(file *source.File) (*RulesGate, source.Diagnostics) {
	rs, diags := fsrules.Compile(file)
	if rs == nil {
		return nil, diags
	}
	return &RulesGate{rs: rs}, diags
}

// Ruleset returns the compiled rules.
func (g *RulesGate) Ruleset() *fsrules.Ruleset { return g.rs }

// NewCoverage starts empty rule coverage counts of these rules, for
// AuthorizeCounted.
func (g *RulesGate) NewCoverage() *coverage.Coverage { return fsrules.NewCoverage(g.rs) }

// Authorize implements Rules. An allowed request is decided without
// sub-expression traces; a denied one is decided again with them, so its
// explanation is complete (lookups read the same state: the engine holds
// the database while it authorizes).
func (g *RulesGate) Authorize(ctx context.Context, req *AuthzRequest) AuthzDecision {
	return g.decide(req, nil)
}

// AuthorizeCounted is Authorize counting every expression the decision
// evaluates into cov (from NewCoverage), allowed requests included: the
// allowed decision stays untraced (counting costs a fraction of a trace),
// and a denial's traced re-decision is not counted twice.
func (g *RulesGate) AuthorizeCounted(_ context.Context, req *AuthzRequest, cov *coverage.Coverage) AuthzDecision {
	return g.decide(req, cov)
}

func (g *RulesGate) decide(req *AuthzRequest, cov *coverage.Coverage) AuthzDecision {
	d := g.authorize(req, false, cov)
	if d.Verdict != Allow {
		d = g.authorize(req, true, nil)
	}
	return d
}

// AuthorizeTraced decides with the full sub-expression trace, allowed or
// not.
func (g *RulesGate) AuthorizeTraced(_ context.Context, req *AuthzRequest) AuthzDecision {
	return g.authorize(req, true, nil)
}

func (g *RulesGate) authorize(req *AuthzRequest, trace bool, cov *coverage.Coverage) AuthzDecision {
	r := &fsrules.Request{
		Method:   string(req.Method),
		Database: req.Database.Database,
		Path:     req.Path,
		Time:     req.Time,
		Batch:    req.Group != nil,
		Coverage: cov,
	}
	if req.Auth.Kind == identity.User {
		r.Auth = &fsrules.Auth{UID: req.Auth.UID, Token: req.Auth.Token}
	}
	if req.Resource != nil {
		r.Resource = &fsrules.Doc{Path: req.Path, Data: FieldsToRules(req.Resource.Fields)}
	}
	if req.After != nil {
		r.After = FieldsToRules(req.After.Fields)
	}
	if req.Get != nil {
		r.Get = lookupAdapter(req.Get)
	}
	if req.GetAfter != nil {
		r.GetAfter = lookupAdapter(req.GetAfter)
	}
	if q := req.Query; q != nil {
		r.Query = queryToRules(q)
		if q.AllDescendants {
			r.Path = collectionGroupPath(q)
		}
	}
	var d *fsrules.Decision
	if trace {
		d = g.rs.Decide(r)
	} else {
		d = g.rs.DecideFast(r)
	}
	out := AuthzDecision{Explanation: d, Reason: reason(d, string(req.Method))}
	switch d.Outcome {
	case sim.Allow:
		out.Verdict = Allow
	case sim.Unsupported:
		out.Verdict = Unsupported
	default:
		out.Verdict = Deny
	}
	return out
}

// collectionGroupPath is the path a collection-group list is matched
// against; a recursive wildcard in the rules absorbs the unknown parents.
func collectionGroupPath(q *QueryInfo) string {
	if q.Parent == "" {
		return q.CollectionID
	}
	return q.Parent + "/" + q.CollectionID
}

// reason renders a decision in the official emulator's words, e.g.
// "false for 'update' @ L6", so clients see familiar messages.
func reason(d *fsrules.Decision, method string) string {
	if d.Outcome == sim.Allow && d.Deciding >= 0 {
		r := d.Trace[d.Deciding]
		return "allowed by allow " + strings.Join(r.Operations, ", ") + " at L" + value.Show(value.Int(r.Line)) + " in match " + r.MatchPath
	}
	return strings.TrimPrefix(d.EmulatorMessage(method), "\n")
}

func lookupAdapter(l Lookup) fsrules.Lookup {
	return fsrules.LookupFunc(func(path string) (value.Map, bool, error) {
		doc, err := l(path)
		if err != nil {
			return nil, false, err
		}
		if doc == nil {
			return nil, false, nil
		}
		return FieldsToRules(doc.Fields), true, nil
	})
}

func queryToRules(q *QueryInfo) *fsrules.Query {
	out := &fsrules.Query{Offset: int64(q.Offset), OrderBy: map[string]string{}, AllDescendants: q.AllDescendants}
	if q.Limit != nil {
		l := int64(*q.Limit)
		out.Limit = &l
	}
	for _, o := range q.OrderBy {
		dir := "ASC"
		if o.GetDirection() == pb.StructuredQuery_DESCENDING {
			dir = "DESC"
		}
		if p := o.GetField().GetFieldPath(); p != "" && p != "__name__" {
			out.OrderBy[p] = dir
		}
	}
	out.Constraints = filterConstraints(q.Where)
	return out
}

var opNames = map[pb.StructuredQuery_FieldFilter_Operator]string{
	pb.StructuredQuery_FieldFilter_EQUAL:                 "==",
	pb.StructuredQuery_FieldFilter_NOT_EQUAL:             "!=",
	pb.StructuredQuery_FieldFilter_LESS_THAN:             "<",
	pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL:    "<=",
	pb.StructuredQuery_FieldFilter_GREATER_THAN:          ">",
	pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL: ">=",
	pb.StructuredQuery_FieldFilter_IN:                    "in",
	pb.StructuredQuery_FieldFilter_NOT_IN:                "not-in",
	pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS:        "array-contains",
	pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:    "array-contains-any",
}

// filterConstraints lists the query's top-level conjunctive filters. The
// branches of an OR give no guarantee for every document, so they add none.
func filterConstraints(f *pb.StructuredQuery_Filter) []fsrules.Constraint {
	if f == nil {
		return nil
	}
	switch ft := f.FilterType.(type) {
	case *pb.StructuredQuery_Filter_CompositeFilter:
		if ft.CompositeFilter.GetOp() != pb.StructuredQuery_CompositeFilter_AND {
			if fs := ft.CompositeFilter.GetFilters(); len(fs) == 1 {
				return filterConstraints(fs[0])
			}
			return nil
		}
		var out []fsrules.Constraint
		for _, sub := range ft.CompositeFilter.GetFilters() {
			out = append(out, filterConstraints(sub)...)
		}
		return out
	case *pb.StructuredQuery_Filter_FieldFilter:
		ff := ft.FieldFilter
		op, ok := opNames[ff.GetOp()]
		if !ok {
			return nil
		}
		return []fsrules.Constraint{{Field: ff.GetField().GetFieldPath(), Op: op, Value: ValueToRules(ff.GetValue())}}
	case *pb.StructuredQuery_Filter_UnaryFilter:
		uf := ft.UnaryFilter
		var op string
		switch uf.GetOp() {
		case pb.StructuredQuery_UnaryFilter_IS_NULL:
			op = "is-null"
		case pb.StructuredQuery_UnaryFilter_IS_NAN:
			op = "is-nan"
		case pb.StructuredQuery_UnaryFilter_IS_NOT_NULL:
			op = "is-not-null"
		case pb.StructuredQuery_UnaryFilter_IS_NOT_NAN:
			op = "is-not-nan"
		default:
			return nil
		}
		return []fsrules.Constraint{{Field: uf.GetField().GetFieldPath(), Op: op}}
	}
	return nil
}

// FieldsToRules converts document fields to the rules value of
// resource.data.
func FieldsToRules(fields map[string]*pb.Value) value.Map {
	m := make(value.Map, len(fields))
	for k, v := range fields {
		m[k] = ValueToRules(v)
	}
	return m
}

// ValueToRules converts a Firestore value to its rules value: references
// become paths (/databases/d/documents/...), geopoints latlngs, and vectors
// the map Firestore stores them as.
func ValueToRules(v *pb.Value) value.Value {
	switch x := v.GetValueType().(type) {
	case *pb.Value_NullValue:
		return value.Null{}
	case *pb.Value_BooleanValue:
		return value.Bool(x.BooleanValue)
	case *pb.Value_IntegerValue:
		return value.Int(x.IntegerValue)
	case *pb.Value_DoubleValue:
		return value.Float(x.DoubleValue)
	case *pb.Value_TimestampValue:
		return value.Timestamp{Time: x.TimestampValue.AsTime()}
	case *pb.Value_StringValue:
		return value.String(x.StringValue)
	case *pb.Value_BytesValue:
		return value.Bytes(x.BytesValue)
	case *pb.Value_ReferenceValue:
		ref := x.ReferenceValue
		if i := strings.Index(ref, "/databases/"); i >= 0 {
			ref = ref[i:]
		}
		return value.ParsePath(ref)
	case *pb.Value_GeoPointValue:
		return value.LatLng{Lat: x.GeoPointValue.GetLatitude(), Lng: x.GeoPointValue.GetLongitude()}
	case *pb.Value_ArrayValue:
		out := make(value.List, len(x.ArrayValue.GetValues()))
		for i, e := range x.ArrayValue.GetValues() {
			out[i] = ValueToRules(e)
		}
		return out
	case *pb.Value_MapValue:
		return FieldsToRules(x.MapValue.GetFields())
	}
	return value.Null{}
}
