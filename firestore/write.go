package firestore

import (
	"context"
	"math"
	"math/big"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore/fsvalue"
)

// writeKind is what a Write does.
type writeKind int

// Write kinds.
const (
	writeUpdate    writeKind = iota + 1 // set or update (Write.update)
	writeDelete                         // Write.delete
	writeTransform                      // Write.transform
	writeVerify                         // a precondition only (the JS SDKs' Write.verify)
)

// MaxWritesPerCommit is the number of writes one BatchWrite may carry. A
// Commit (batch or transaction) is bounded only by MaxRequestBytes, as in
// production today and on the official emulator; tools that split work
// into commits use this as their chunk size.
const MaxWritesPerCommit = 500

// MaxRequestBytes is production's limit on an API request's size.
const MaxRequestBytes = 10 << 20

// requestBoundKey is the context key of WithRequestSizeAtMost and
// WithDecodedRequest: its value is a *requestFacts (requestContext).
type requestBoundKey struct{}

// requestFacts is what a transport knows of the request a context serves.
type requestFacts struct {
	atMost int  // it arrived in at most this many bytes
	owned  bool // the engine may keep its parts (WithDecodedRequest)
}

// WithRequestSizeAtMost returns ctx saying that the request it serves
// arrived in at most n bytes (a transport that read it knows): a bound
// within MaxRequestBytes spares checkRequestSize encoding the request's
// size again, a walk of every field of every document it writes through
// protobuf reflection (a few percent of a small write's CPU).
func WithRequestSizeAtMost(ctx context.Context, n int) context.Context {
	return &requestContext{ctx, requestFacts{atMost: n}}
}

// requestContext is a context carrying its request's facts, its value
// for requestBoundKey (a *requestFacts): one allocation per request where
// context.WithValue took two, its node and the facts boxed.
type requestContext struct {
	context.Context
	facts requestFacts
}

func (c *requestContext) Value(key any) any {
	if _, ok := key.(requestBoundKey); ok {
		return &c.facts
	}
	return c.Context.Value(key)
}

// requestFactsOf is what ctx says of its request, nil for nothing.
func requestFactsOf(ctx context.Context) *requestFacts {
	f, _ := ctx.Value(requestBoundKey{}).(*requestFacts)
	return f
}

// WithDecodedRequest is WithRequestSizeAtMost for a request the transport
// decoded for this call alone and neither reads nor changes once the
// engine has it (a gRPC server's unary request): a commit may then keep
// the values a write sends in the document it stores instead of copies
// (requestOwned).
func WithDecodedRequest(ctx context.Context, n int) context.Context {
	return &requestContext{ctx, requestFacts{atMost: n, owned: true}}
}

// requestOwned reports whether ctx says its request is the engine's to
// keep (WithDecodedRequest).
func requestOwned(ctx context.Context) bool {
	f := requestFactsOf(ctx)
	return f != nil && f.owned
}

// checkRequestSize rejects requests over MaxRequestBytes in production's
// words; a request known to be within it (WithRequestSizeAtMost) is not
// sized again.
func checkRequestSize(ctx context.Context, m proto.Message) error {
	if f := requestFactsOf(ctx); f != nil && f.atMost <= MaxRequestBytes {
		return nil
	}
	if n := proto.Size(m); n > MaxRequestBytes {
		return fsvalue.Errorf(ErrInvalidArgument, "Request payload size exceeds the limit: %d bytes (this request has %d).", MaxRequestBytes, n)
	}
	return nil
}

// writeOp is a validated Write.
type writeOp struct {
	w          *pb.Write
	kind       writeKind
	rel        string
	name       string
	mask       []FieldPath // nil: replace the whole document
	transforms []fieldTransform
	sentinels  []event.Sentinel
	// keepSent says apply may store the values the write sends as they
	// are, not copies (keepsSent).
	keepSent bool
}

// keepsSent reports whether op's apply may store the fields op sends as
// they are when the request is the engine's to keep (requestOwned): a
// write of the whole document, no transforms, every field a scalar that
// nothing changes in place. A timestamp (apply truncates it to
// microseconds in place), an array or a map (which may hold one) and a
// transform (set into the fields) are copied first, so that the request's
// values, which its events encode, stay what the caller sent. Copying was
// half the allocations of a small set in the engine.
func (op *writeOp) keepsSent() bool {
	if op.kind != writeUpdate || op.mask != nil || len(op.transforms) > 0 {
		return false
	}
	for _, v := range op.w.GetUpdate().GetFields() {
		switch v.GetValueType().(type) {
		case *pb.Value_NullValue, *pb.Value_BooleanValue, *pb.Value_IntegerValue, *pb.Value_DoubleValue,
			*pb.Value_StringValue, *pb.Value_ReferenceValue, *pb.Value_BytesValue:
		default:
			return false
		}
	}
	return true
}

type fieldTransform struct {
	fp FieldPath
	t  *pb.DocumentTransform_FieldTransform
}

func ts(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }

// replacesWith reports whether after, the document op's apply made, holds
// exactly the fields op sent: a write of the whole document (no mask, no
// transforms) whose timestamps apply did not truncate (it keeps
// microseconds). Their JSON forms are then one.
func (op *writeOp) replacesWith(after *pb.Document) bool {
	if op.kind != writeUpdate || op.mask != nil || len(op.transforms) > 0 {
		return false
	}
	sent := op.w.GetUpdate().GetFields()
	if len(sent) != len(after.GetFields()) {
		return false
	}
	for _, v := range sent {
		if !microsOnly(v) {
			return false
		}
	}
	return true
}

// microsOnly reports whether every timestamp in v is whole microseconds
// (truncateTimestamps leaves it as it is).
func microsOnly(v *pb.Value) bool {
	switch x := v.GetValueType().(type) {
	case *pb.Value_TimestampValue:
		return x.TimestampValue.GetNanos()%1000 == 0
	case *pb.Value_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			if !microsOnly(e) {
				return false
			}
		}
	case *pb.Value_MapValue:
		for _, e := range x.MapValue.GetFields() {
			if !microsOnly(e) {
				return false
			}
		}
	}
	return true
}

// parseWrite validates a Write against database db.
func parseWrite(db DatabaseName, w *pb.Write) (*writeOp, error) {
	op := &writeOp{w: w}
	var name string
	var transforms []*pb.DocumentTransform_FieldTransform
	switch x := w.GetOperation().(type) {
	case *pb.Write_Update:
		op.kind = writeUpdate
		name = x.Update.GetName()
		transforms = w.GetUpdateTransforms()
	case *pb.Write_Delete:
		op.kind = writeDelete
		name = x.Delete
	case *pb.Write_Transform:
		op.kind = writeTransform
		name = x.Transform.GetDocument()
		transforms = x.Transform.GetFieldTransforms()
	default:
		v, ok := verifyTarget(w)
		if !ok {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "A write must set one of update, delete, transform or verify.")
		}
		op.kind = writeVerify
		name = v
	}
	dn, rel, err := ParseDocumentName(name)
	if err != nil {
		return nil, err
	}
	if dn != db {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "Document %q is not in database %s.", name, db)
	}
	op.rel, op.name = rel, name
	if op.kind != writeUpdate && (w.UpdateMask != nil || len(w.UpdateTransforms) > 0) {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "update_mask and update_transforms are only allowed on an update write (document %q).", name)
	}
	if op.kind == writeUpdate {
		if err := validateFields(w.GetUpdate().GetFields()); err != nil {
			return nil, err
		}
		if w.UpdateMask != nil {
			op.mask = []FieldPath{}
			for _, s := range w.UpdateMask.GetFieldPaths() {
				fp, err := parseRequestPath(s)
				if err != nil {
					return nil, err
				}
				if err := checkWritablePath(fp); err != nil {
					return nil, err
				}
				op.mask = append(op.mask, fp)
				if fsvalue.GetField(w.GetUpdate().GetFields(), fp) == nil {
					op.sentinels = append(op.sentinels, event.Sentinel{Field: fp.String(), Kind: event.DeleteField})
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, t := range transforms {
		fp, err := ParseFieldPath(t.GetFieldPath())
		if err != nil {
			return nil, err
		}
		if err := checkWritablePath(fp); err != nil {
			return nil, err
		}
		if seen[fp.String()] {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Field %s has more than one transform in the write to %q.", fp, name)
		}
		seen[fp.String()] = true
		kind, err := checkTransform(fp, t)
		if err != nil {
			return nil, err
		}
		op.transforms = append(op.transforms, fieldTransform{fp: fp, t: t})
		op.sentinels = append(op.sentinels, event.Sentinel{Field: fp.String(), Kind: kind})
	}
	if p := w.GetCurrentDocument(); p != nil {
		if ut, ok := p.GetConditionType().(*pb.Precondition_UpdateTime); ok {
			if err := checkMicros(ut.UpdateTime); err != nil {
				return nil, err
			}
		}
	}
	return op, nil
}

// verifyFieldNumber is Write.verify: a precondition-only write the JS SDKs
// send for documents a transaction read but does not write. It is not in
// the published Go protos, so it arrives as an unknown field.
const verifyFieldNumber = 5

// verifyTarget returns the document name of a verify write.
func verifyTarget(w *pb.Write) (string, bool) {
	b := w.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
		if num == verifyFieldNumber && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return "", false
			}
			return string(v), true
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return "", false
		}
		b = b[m:]
	}
	return "", false
}

// VerifyWrite returns a verify write for name with a precondition, as the
// JS SDKs send it (for tests and tools).
func VerifyWrite(name string, p *pb.Precondition) *pb.Write {
	w := &pb.Write{CurrentDocument: p}
	var raw []byte
	raw = protowire.AppendTag(raw, verifyFieldNumber, protowire.BytesType)
	raw = protowire.AppendString(raw, name)
	w.ProtoReflect().SetUnknown(raw)
	return w
}

func checkMicros(t *timestamppb.Timestamp) error {
	if t.GetNanos()%1000 != 0 {
		return fsvalue.Errorf(ErrInvalidArgument, "timestamp cannot have more than microseconds precision")
	}
	return nil
}

func checkWritablePath(fp FieldPath) error {
	for _, s := range fp {
		if fsvalue.IsReserved(s) {
			return fsvalue.Errorf(ErrInvalidArgument, "Field name %s is reserved.", fp)
		}
	}
	return nil
}

func checkTransform(fp FieldPath, t *pb.DocumentTransform_FieldTransform) (event.SentinelKind, error) {
	switch x := t.GetTransformType().(type) {
	case *pb.DocumentTransform_FieldTransform_SetToServerValue:
		if x.SetToServerValue != pb.DocumentTransform_FieldTransform_REQUEST_TIME {
			return "", fsvalue.Errorf(ErrInvalidArgument, "Field %s: set_to_server_value must be REQUEST_TIME.", fp)
		}
		return event.ServerTimestamp, nil
	case *pb.DocumentTransform_FieldTransform_Increment:
		if !fsvalue.IsNumber(x.Increment) {
			return "", fsvalue.Errorf(ErrInvalidArgument, "Field %s: increment operand must be an integer or a double.", fp)
		}
		return event.Increment, nil
	case *pb.DocumentTransform_FieldTransform_Maximum:
		if !fsvalue.IsNumber(x.Maximum) {
			return "", fsvalue.Errorf(ErrInvalidArgument, "Field %s: maximum operand must be an integer or a double.", fp)
		}
		return event.Maximum, nil
	case *pb.DocumentTransform_FieldTransform_Minimum:
		if !fsvalue.IsNumber(x.Minimum) {
			return "", fsvalue.Errorf(ErrInvalidArgument, "Field %s: minimum operand must be an integer or a double.", fp)
		}
		return event.Minimum, nil
	case *pb.DocumentTransform_FieldTransform_AppendMissingElements:
		if err := validateValue(fp, Array(x.AppendMissingElements.GetValues()...), 1); err != nil {
			return "", err
		}
		return event.ArrayUnion, nil
	case *pb.DocumentTransform_FieldTransform_RemoveAllFromArray:
		if err := validateValue(fp, Array(x.RemoveAllFromArray.GetValues()...), 1); err != nil {
			return "", err
		}
		return event.ArrayRemove, nil
	}
	return "", fsvalue.Errorf(ErrInvalidArgument, "Field %s: the transform has no type set.", fp)
}

// checkPrecondition tests op's precondition against the current state.
func (op *writeOp) checkPrecondition(cur *pb.Document) error {
	p := op.w.GetCurrentDocument()
	if p == nil {
		return nil
	}
	switch x := p.GetConditionType().(type) {
	case *pb.Precondition_Exists:
		if x.Exists && cur == nil {
			if op.kind == writeDelete {
				return fsvalue.Errorf(ErrNotFound, "No document to delete: %s", op.name)
			}
			return fsvalue.Errorf(ErrNotFound, "No document to update: %s", op.name)
		}
		if !x.Exists && cur != nil {
			return fsvalue.Errorf(ErrAlreadyExists, "Document already exists: %s", op.name)
		}
	case *pb.Precondition_UpdateTime:
		if cur == nil {
			return fsvalue.Errorf(ErrFailedPrecondition, "The document %s does not exist, but the precondition requires update time %s.", op.name, x.UpdateTime.AsTime().Format(time.RFC3339Nano))
		}
		if !fsvalue.SameTime(cur.UpdateTime, x.UpdateTime) {
			return fsvalue.Errorf(ErrFailedPrecondition, "The document %s was last updated at %s, but the precondition requires update time %s.", op.name,
				cur.UpdateTime.AsTime().Format(time.RFC3339Nano), x.UpdateTime.AsTime().Format(time.RFC3339Nano))
		}
	}
	return nil
}

// apply computes the document after op at commit time t. cur is not
// modified. It returns the new document (nil for delete) and the transform
// results.
// apply returns the document op makes of cur at commit time t; stamp is
// t as a Timestamp, shared by every document the commit creates or
// changes (stored documents are never modified in place).
func (op *writeOp) apply(db DatabaseName, cur *pb.Document, t time.Time, stamp *timestamppb.Timestamp) (*pb.Document, []*pb.Value, error) {
	if err := op.checkPrecondition(cur); err != nil {
		return nil, nil, err
	}
	switch op.kind {
	case writeDelete:
		return nil, nil, nil
	case writeVerify:
		return cur, nil, nil
	}
	var fields map[string]*pb.Value
	switch {
	case op.kind == writeUpdate && op.mask == nil && op.keepSent:
		fields = op.w.GetUpdate().GetFields()
	case op.kind == writeUpdate && op.mask == nil:
		fields = fsvalue.CloneFields(op.w.GetUpdate().GetFields())
	case cur != nil:
		fields = fsvalue.CloneFields(cur.Fields)
	default:
		fields = map[string]*pb.Value{}
	}
	if op.kind == writeUpdate && op.mask != nil {
		src := op.w.GetUpdate().GetFields()
		for _, fp := range op.mask {
			if v := fsvalue.GetField(src, fp); v != nil {
				fsvalue.SetField(fields, fp, fsvalue.Clone(v))
			} else {
				fsvalue.DeleteField(fields, fp)
			}
		}
	}
	for _, v := range fields {
		truncateTimestamps(v)
	}
	results := make([]*pb.Value, 0, len(op.transforms))
	for _, ft := range op.transforms {
		nv, res := applyTransform(fsvalue.GetField(fields, ft.fp), ft.t, t)
		fsvalue.SetField(fields, ft.fp, nv)
		results = append(results, res)
	}
	if err := checkSize(db, op.rel, fields); err != nil {
		return nil, nil, err
	}
	next := &pb.Document{Name: op.name, Fields: fields}
	if cur != nil {
		next.CreateTime = cur.CreateTime
		if fsvalue.IdenticalFields(cur.Fields, fields) {
			// A write that changes nothing keeps the document's update time
			// (observed on the official emulator: the write result and the
			// stored document keep the old update_time; commit_time advances).
			next.UpdateTime = cur.UpdateTime
			return next, results, nil
		}
	} else {
		next.CreateTime = stamp
	}
	next.UpdateTime = stamp
	return next, results, nil
}

// applyTransform returns the field's new value and the transform result.
func applyTransform(base *pb.Value, t *pb.DocumentTransform_FieldTransform, now time.Time) (*pb.Value, *pb.Value) {
	switch x := t.GetTransformType().(type) {
	case *pb.DocumentTransform_FieldTransform_SetToServerValue:
		v := &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: ts(now)}}
		return v, v
	case *pb.DocumentTransform_FieldTransform_Increment:
		v := increment(base, x.Increment)
		return v, v
	case *pb.DocumentTransform_FieldTransform_Maximum:
		v := extremum(base, x.Maximum, 1)
		return v, v
	case *pb.DocumentTransform_FieldTransform_Minimum:
		v := extremum(base, x.Minimum, -1)
		return v, v
	case *pb.DocumentTransform_FieldTransform_AppendMissingElements:
		var out []*pb.Value
		if a, ok := base.GetValueType().(*pb.Value_ArrayValue); ok {
			out = append(out, a.ArrayValue.GetValues()...)
		}
		for _, e := range x.AppendMissingElements.GetValues() {
			if !containsSame(out, e) {
				out = append(out, fsvalue.Clone(e))
			}
		}
		return Array(out...), Null()
	case *pb.DocumentTransform_FieldTransform_RemoveAllFromArray:
		var out []*pb.Value
		if a, ok := base.GetValueType().(*pb.Value_ArrayValue); ok {
			for _, e := range a.ArrayValue.GetValues() {
				if !containsSame(x.RemoveAllFromArray.GetValues(), e) {
					out = append(out, e)
				}
			}
		}
		return Array(out...), Null()
	}
	return base, Null()
}

func containsSame(vs []*pb.Value, v *pb.Value) bool {
	for _, e := range vs {
		if fsvalue.SameValue(e, v) {
			return true
		}
	}
	return false
}

// increment adds n to base; a non-numeric or missing base counts as 0.
// Integer sums saturate at the int64 bounds, as on the official emulator;
// any double operand makes the result a double.
func increment(base, n *pb.Value) *pb.Value {
	if !fsvalue.IsNumber(base) {
		return fsvalue.Clone(n)
	}
	bi, bInt := base.GetValueType().(*pb.Value_IntegerValue)
	ni, nInt := n.GetValueType().(*pb.Value_IntegerValue)
	if bInt && nInt {
		s := new(big.Int).Add(big.NewInt(bi.IntegerValue), big.NewInt(ni.IntegerValue))
		switch {
		case s.IsInt64():
			return Int(s.Int64())
		case s.Sign() > 0:
			return Int(math.MaxInt64)
		default:
			return Int(math.MinInt64)
		}
	}
	return Double(toFloat(base) + toFloat(n))
}

func toFloat(v *pb.Value) float64 {
	if i, ok := v.GetValueType().(*pb.Value_IntegerValue); ok {
		return float64(i.IntegerValue)
	}
	return v.GetDoubleValue()
}

// extremum implements maximum (dir 1) and minimum (dir -1): a non-numeric
// base is replaced by the operand, NaN wins, and on a numeric tie the stored
// value (and its type) is kept.
func extremum(base, n *pb.Value, dir int) *pb.Value {
	switch {
	case !fsvalue.IsNumber(base):
		return fsvalue.Clone(n)
	case fsvalue.IsNaN(base):
		return base
	case fsvalue.IsNaN(n):
		return fsvalue.Clone(n)
	}
	if Compare(n, base)*dir > 0 {
		return fsvalue.Clone(n)
	}
	return base
}
