package firestore

import (
	"context"
	"encoding/base64"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
)

// consistency is a read's consistency selector.
type consistency struct {
	txid     []byte
	newTxn   *pb.TransactionOptions
	readTime *timestamppb.Timestamp
}

// consistencyOf reads a request's consistency selector (transaction, new
// transaction or read time) through the getters protoc generates for it.
func consistencyOf(req any) consistency {
	var c consistency
	if r, ok := req.(interface{ GetTransaction() []byte }); ok {
		c.txid = r.GetTransaction()
	}
	if r, ok := req.(interface {
		GetNewTransaction() *pb.TransactionOptions
	}); ok {
		c.newTxn = r.GetNewTransaction()
	}
	if r, ok := req.(interface {
		GetReadTime() *timestamppb.Timestamp
	}); ok {
		c.readTime = r.GetReadTime()
	}
	return c
}

// readView is where a read happens: the time to read at (the latest
// durable commit unless a read time or read-only transaction says older)
// and the transaction to record reads in.
type readView struct {
	t       time.Time
	tx      *txn
	newTxID []byte
}

func (v readView) doc(db *database, rel string) *pb.Document {
	d := db.st.GetAt(rel, v.t)
	if v.tx != nil {
		v.tx.recordRead(rel, d)
	}
	return d
}

// tooOld fails reads at t when the history they need is no longer kept
// (older than Options.History, or dropped for Options.HistoryBytes);
// callers hold db.st's lock.
func (db *database) tooOld(t time.Time, what string) error {
	if db.st.Since().IsZero() || !t.Before(db.st.Since()) {
		return nil
	}
	return fsvalue.Errorf(ErrFailedPrecondition, "%s %s is older than the oldest available read time %s: this database keeps at most %s and %d MiB of old document versions.",
		what, t.UTC().Format(time.RFC3339Nano), db.st.Since().UTC().Format(time.RFC3339Nano), db.e.opts.History, db.e.opts.HistoryBytes>>20)
}

// checkReadTime validates a requested read time; callers hold db.st's lock.
func (db *database) checkReadTime(t time.Time, nanos int32) (time.Time, error) {
	if nanos%1000 != 0 {
		return time.Time{}, fsvalue.Errorf(ErrInvalidArgument, "read_time cannot have more than microseconds precision")
	}
	if err := db.tooOld(t, "read_time"); err != nil {
		return time.Time{}, err
	}
	if t.After(db.st.ReadTime()) {
		return db.st.ReadTime(), nil
	}
	return t, nil
}

// view resolves the consistency selector; callers hold db.st's lock (read
// is enough: a transaction is found or opened under db.txnMu, and what it
// reads is recorded under its own lock).
func (db *database) view(c consistency) (readView, error) {
	switch {
	case len(c.txid) > 0:
		t, err := db.txn(c.txid)
		if err != nil {
			return readView{}, err
		}
		if t.readOnly {
			if err := db.tooOld(t.readTime, "The read-only transaction's read time"); err != nil {
				return readView{}, err
			}
			return readView{t: t.readTime, tx: t}, nil
		}
		return readView{t: db.st.ReadTime(), tx: t}, nil
	case c.newTxn != nil:
		t, err := db.begin(c.newTxn)
		if err != nil {
			return readView{}, err
		}
		v := readView{t: db.st.ReadTime(), tx: t, newTxID: []byte(t.id)}
		if t.readOnly {
			v.t = t.readTime
		}
		return v, nil
	case c.readTime != nil:
		t, err := db.checkReadTime(c.readTime.AsTime(), c.readTime.GetNanos())
		if err != nil {
			return readView{}, err
		}
		return readView{t: t}, nil
	}
	return readView{t: db.st.ReadTime()}, nil
}

// readLock takes the database lock every read needs, in a transaction
// too, and returns its release. The read lock is enough there: a
// commit, which takes the lock exclusively, cannot run between a read and
// the recording of the version it read, and it checks those versions
// (validate) under the same lock. Opening and finding transactions
// (db.txns) is guarded by db.txnMu instead, so transactions reading
// at once, or beside other reads, no longer wait for each other.
func (db *database) readLock() func() {
	db.st.RLock()
	return db.st.RUnlock
}

// GetDocument reads one document.
func (e *Engine) GetDocument(ctx context.Context, who identity.Identity, req *pb.GetDocumentRequest) (*pb.Document, error) {
	c := consistencyOf(req)
	dn, _, err := ParseDocumentName(req.GetName())
	if err != nil {
		return nil, err
	}
	resp, err := e.batchGet(ctx, who, dn.String(), []string{req.GetName()}, req.GetMask(), c)
	if err != nil {
		return nil, err
	}
	if resp[0].GetFound() == nil {
		return nil, fsvalue.Errorf(ErrNotFound, "Document %q not found.", req.GetName())
	}
	return resp[0].GetFound(), nil
}

// BatchGetDocuments reads documents; the responses follow the request order.
func (e *Engine) BatchGetDocuments(ctx context.Context, who identity.Identity, req *pb.BatchGetDocumentsRequest) ([]*pb.BatchGetDocumentsResponse, error) {
	c := consistencyOf(req)
	return e.batchGet(ctx, who, req.GetDatabase(), req.GetDocuments(), req.GetMask(), c)
}

func (e *Engine) batchGet(ctx context.Context, who identity.Identity, dbName string, names []string, mask *pb.DocumentMask, c consistency) ([]*pb.BatchGetDocumentsResponse, error) {
	start := time.Now()
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if err := checkMask(mask); err != nil {
		return nil, err
	}
	// The request's database is checked first, as on the official
	// emulator, even when the documents name theirs.
	name, err := ParseDatabaseName(dbName)
	if err != nil {
		return nil, err
	}
	// One name's path is kept on the stack: most gets read one document.
	var one [1]string
	rels := one[:]
	if len(names) != 1 {
		rels = make([]string, len(names))
	}
	for i, n := range names {
		dn, rel, err := ParseDocumentName(n)
		if err != nil {
			return nil, err
		}
		if dn != name {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Document %q is not in database %s.", n, name)
		}
		rels[i] = rel
	}
	db := e.db(name)
	// Not readLock: the function it returns was an allocation per get.
	db.st.RLock()
	defer db.st.RUnlock()
	v, err := db.view(c)
	if err != nil {
		return nil, err
	}
	out := make([]*pb.BatchGetDocumentsResponse, len(rels))
	rt := ts(v.t) // shared by the responses, a message only read from here on
	var denial error
	for i, rel := range rels {
		d := v.doc(db, rel)
		dec := adminDecision // without a request for the rules, nor its lookup, to bypass them
		if !who.IsAdmin() {
			dec = e.authorize(ctx, &AuthzRequest{Database: name, Method: MethodGet, Path: rel, Auth: who,
				Resource: d, Time: db.e.now(), Get: db.lookupAt(v.t)})
		}
		e.emitRead(who, name, MethodGet, rel, dec, d, time.Since(start), v)
		if dec.Verdict != Allow && denial == nil {
			denial = denied(MethodGet, rel, dec)
		}
		var r *pb.BatchGetDocumentsResponse
		if d == nil {
			r = &pb.BatchGetDocumentsResponse{ReadTime: rt, Result: &pb.BatchGetDocumentsResponse_Missing{Missing: names[i]}}
		} else {
			pd, err := project(d, mask)
			if err != nil {
				return nil, err
			}
			r = newFoundResponse(pd, rt)
		}
		out[i] = r
	}
	if denial != nil {
		return nil, denial
	}
	if len(out) > 0 && v.newTxID != nil {
		out[0].Transaction = v.newTxID
	}
	return out, nil
}

// WireDocuments readies documents a read of database db returned (the
// Found of BatchGetDocuments, the Document of RunQuery) for a sender that
// marshals them: each one the store keeps the encoding of (a durable
// database's documents, fsstore.Store.Encodings) is replaced in docs by a
// document that marshals to that same encoding — its name, and the rest
// as unknown fields — so that sending it costs a copy instead of an
// encoding. Others stay as they are. The replacements carry no fields for
// Go code to read: they are for the wire alone.
func (e *Engine) WireDocuments(db DatabaseName, docs []*pb.Document) {
	e.mu.Lock()
	d, ok := e.dbs[db]
	e.mu.Unlock()
	if !ok {
		return
	}
	d.st.Encodings(docs, func(i int, raw []byte) {
		w := &pb.Document{Name: docs[i].Name}
		w.ProtoReflect().SetUnknown(raw)
		docs[i] = w
	})
}

// RunQuery runs a structured query. With no result it still returns one
// response carrying the read time, as production does.
func (e *Engine) RunQuery(ctx context.Context, who identity.Identity, req *pb.RunQueryRequest) ([]*pb.RunQueryResponse, error) {
	start := time.Now()
	c := consistencyOf(req)
	explain := req.GetExplainOptions()
	run := explainRun(explain, runDocuments)
	docs, _, q, v, err := e.queryOrCount(ctx, who, req.GetParent(), req.GetStructuredQuery(), c, run)
	if err != nil {
		return nil, err
	}
	if run == runPlan {
		r := &pb.RunQueryResponse{ExplainMetrics: e.explainMetrics(q, explain, execStats{})}
		if v.newTxID != nil {
			r.Transaction = v.newTxID
		}
		return []*pb.RunQueryResponse{r}, nil
	}
	// The responses share their read time (a message only read from
	// here on), and are allocated together.
	rt := ts(v.t)
	out := make([]*pb.RunQueryResponse, max(len(docs), 1))
	rs := make([]pb.RunQueryResponse, len(out))
	for i := range out {
		out[i] = &rs[i]
		out[i].ReadTime = rt
	}
	for i, d := range docs {
		out[i].Document = q.project(d)
	}
	if q.offset > 0 {
		out[0].SkippedResults = int32(min(q.offset, len(docs)+q.offset))
	}
	out[len(out)-1].ContinuationSelector = &pb.RunQueryResponse_Done{Done: true}
	if v.newTxID != nil {
		out[0].Transaction = v.newTxID
	}
	if explain != nil {
		read := len(docs) + int(out[0].SkippedResults)
		out[len(out)-1].ExplainMetrics = e.explainMetrics(q, explain, execStats{
			results: len(docs), documents: read, indexEntries: read, duration: time.Since(start)})
	}
	return out, nil
}

// query compiles, authorizes (list) and runs a query.
func (e *Engine) query(ctx context.Context, who identity.Identity, parentName string, sq *pb.StructuredQuery, c consistency) ([]*pb.Document, *query, readView, error) {
	docs, _, q, v, err := e.queryOrCount(ctx, who, parentName, sq, c, runDocuments)
	return docs, q, v, err
}

// queryOrCount is query that also returns the number of results. With
// runCount it may return that number alone (docs nil): a scan outside a
// transaction then counts the matching documents instead of collecting
// them, so that counting a large collection does not hold every one of its
// documents decoded at once (for 100k small documents, ~60 MB of heap).
// With runPlan the query is compiled and authorized but not run (no
// documents, a count of 0).
func (e *Engine) queryOrCount(ctx context.Context, who identity.Identity, parentName string, sq *pb.StructuredQuery, c consistency, run queryRun) ([]*pb.Document, int, *query, readView, error) {
	start := time.Now()
	if err := checkCtx(ctx); err != nil {
		return nil, 0, nil, readView{}, err
	}
	name, parent, err := ParseParentName(parentName)
	if err != nil {
		return nil, 0, nil, readView{}, err
	}
	q, err := compileQuery(name, parent, sq)
	if err != nil {
		return nil, 0, nil, readView{}, err
	}
	if err := e.checkIndex(q); err != nil {
		return nil, 0, nil, readView{}, err
	}
	db := e.db(name)
	unlockDB := db.readLock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			unlockDB()
		}
	}
	defer unlock()
	v, err := db.view(c)
	if err != nil {
		return nil, 0, nil, readView{}, err
	}
	dec := e.authorize(ctx, &AuthzRequest{Database: name, Method: MethodList, Path: q.collPath(), Auth: who,
		Time: db.e.now(), Query: q.info(), Get: db.lookupAt(v.t)})
	docs, n := []*pb.Document(nil), -1
	switch {
	case dec.Verdict != Allow, run == runPlan:
		n = 0
	case v.tx == nil && q.nearest == nil:
		// Outside transactions a query that no index serves scans without
		// the lock, so a large scan never holds up writers.
		out, ok := db.indexedMatching(q, v.t, false)
		if !ok {
			entries := db.snapshot(q)
			unlock()
			if run == runCount {
				n = q.windowLen(countEntries(q, v.t, entries))
				break
			}
			out = scanEntries(q, v.t, false, entries)
		}
		docs = q.window(out)
	default:
		docs = db.runQuery(q, v.t, false)
		if v.tx != nil {
			v.tx.recordQuery(q, docs)
		}
	}
	unlock()
	if e.eventsOn() {
		e.emitList(who, q, dec, time.Since(start), v)
	}
	if dec.Verdict != Allow {
		return nil, 0, nil, readView{}, denied(MethodList, q.collPath(), dec)
	}
	if n < 0 {
		n = len(docs)
	}
	return docs, n, q, v, nil
}

// MaxAggregations is production's limit on the aggregations of one query.
const MaxAggregations = 5

// RunAggregationQuery computes count, sum and avg over a query.
func (e *Engine) RunAggregationQuery(ctx context.Context, who identity.Identity, req *pb.RunAggregationQueryRequest) ([]*pb.RunAggregationQueryResponse, error) {
	start := time.Now()
	c := consistencyOf(req)
	saq := req.GetStructuredAggregationQuery()
	if saq == nil {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "A structured aggregation query must be given.")
	}
	aggs := saq.GetAggregations()
	if len(aggs) == 0 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "An aggregation query must have at least one aggregation.")
	}
	if len(aggs) > MaxAggregations {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "The aggregation query has %d aggregations; the maximum number of aggregations allowed in a query is %d.", len(aggs), MaxAggregations)
	}
	aliases := map[string]bool{}
	type spec struct {
		alias string
		agg   *pb.StructuredAggregationQuery_Aggregation
		fp    FieldPath
	}
	var specs []spec
	for i, a := range aggs {
		alias := a.GetAlias()
		if alias == "" {
			alias = "field_" + itoa(i+1)
		}
		if aliases[alias] {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Aggregation aliases contain duplicate alias: %s.", alias)
		}
		aliases[alias] = true
		s := spec{alias: alias, agg: a}
		var f *pb.StructuredQuery_FieldReference
		switch x := a.GetOperator().(type) {
		case *pb.StructuredAggregationQuery_Aggregation_Count_:
			if ut := x.Count.GetUpTo(); ut != nil && ut.GetValue() <= 0 {
				return nil, fsvalue.Errorf(ErrInvalidArgument, "count up_to must be greater than zero; got %d.", ut.GetValue())
			}
		case *pb.StructuredAggregationQuery_Aggregation_Sum_:
			f = x.Sum.GetField()
		case *pb.StructuredAggregationQuery_Aggregation_Avg_:
			f = x.Avg.GetField()
		default:
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Aggregation %s has no operator.", alias)
		}
		if f != nil {
			fp, err := parseRequestPath(f.GetFieldPath())
			if err != nil {
				return nil, err
			}
			s.fp = fp
		}
		specs = append(specs, s)
	}
	run := runCount
	for _, s := range specs {
		if s.fp != nil {
			run = runDocuments
		}
	}
	explain := req.GetExplainOptions()
	run = explainRun(explain, run)
	docs, matched, q, v, err := e.queryOrCount(ctx, who, req.GetParent(), saq.GetStructuredQuery(), c, run)
	if err != nil {
		return nil, err
	}
	if run == runPlan {
		r := &pb.RunAggregationQueryResponse{ExplainMetrics: e.explainMetrics(q, explain, execStats{})}
		if v.newTxID != nil {
			r.Transaction = v.newTxID
		}
		return []*pb.RunAggregationQueryResponse{r}, nil
	}
	// Several aggregations over fields run over the documents that have
	// every one of those fields, count included (observed on the official
	// emulator: production plans them as one scan of an index holding all
	// the fields).
	var aggFields []FieldPath
	for _, s := range specs {
		if s.fp != nil {
			aggFields = appendPath(aggFields, s.fp)
		}
	}
	if len(specs) > 1 && len(aggFields) > 0 {
		docs = slices.DeleteFunc(slices.Clone(docs), func(d *pb.Document) bool {
			for _, fp := range aggFields {
				if fsvalue.GetField(d.Fields, fp) == nil {
					return true
				}
			}
			return false
		})
		matched = len(docs)
	}
	fields := map[string]*pb.Value{}
	scanned := 0 // the index entries the aggregations read (a count stops at its up_to)
	for _, s := range specs {
		switch x := s.agg.GetOperator().(type) {
		case *pb.StructuredAggregationQuery_Aggregation_Count_:
			n := int64(matched)
			if ut := x.Count.GetUpTo(); ut != nil && n > ut.GetValue() {
				n = ut.GetValue()
			}
			fields[s.alias] = Int(n)
			scanned = max(scanned, int(n))
		case *pb.StructuredAggregationQuery_Aggregation_Sum_:
			sum, _ := sumField(docs, s.fp)
			fields[s.alias] = sum
			scanned = matched
		case *pb.StructuredAggregationQuery_Aggregation_Avg_:
			fields[s.alias] = avgField(docs, s.fp)
			scanned = matched
		}
	}
	r := &pb.RunAggregationQueryResponse{Result: &pb.AggregationResult{AggregateFields: fields}, ReadTime: ts(v.t)}
	if v.newTxID != nil {
		r.Transaction = v.newTxID
	}
	if explain != nil {
		r.ExplainMetrics = e.explainMetrics(q, explain, execStats{
			results: 1, indexEntries: scanned, aggregation: true, duration: time.Since(start)})
	}
	return []*pb.RunAggregationQueryResponse{r}, nil
}

// sumField sums the numeric values at fp (others are ignored): an integer
// while every value is an integer and the exact total fits in int64
// (observed: intermediate overflow does not matter), a double otherwise.
// It also returns the count of numeric values.
func sumField(docs []*pb.Document, fp FieldPath) (*pb.Value, int) {
	exact := new(big.Int)
	// Doubles are summed exactly and rounded once, as the emulator does
	// (4.8+5.9+6.0+7.1+8.2 is 32, not 31.999999999999996); f only tracks
	// NaN and infinities.
	fsum := new(big.Float).SetPrec(2200)
	var f float64
	allInt, n := true, 0
	for _, d := range docs {
		v := fsvalue.GetField(d.Fields, fp)
		switch x := v.GetValueType().(type) {
		case *pb.Value_IntegerValue:
			exact.Add(exact, big.NewInt(x.IntegerValue))
			n++
		case *pb.Value_DoubleValue:
			if math.IsNaN(x.DoubleValue) || math.IsInf(x.DoubleValue, 0) {
				f += x.DoubleValue
			} else {
				fsum.Add(fsum, new(big.Float).SetFloat64(x.DoubleValue))
			}
			allInt = false
			n++
		}
	}
	if allInt && exact.IsInt64() {
		return Int(exact.Int64()), n
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Double(f), n
	}
	r, _ := fsum.Add(fsum, new(big.Float).SetInt(exact)).Float64()
	return Double(r), n
}

// avgField averages the numeric values at fp as a double; null when there
// are none.
func avgField(docs []*pb.Document, fp FieldPath) *pb.Value {
	sum, n := sumField(docs, fp)
	if n == 0 {
		return Null()
	}
	// The emulator divides the (correctly rounded) sum: the average of
	// 4.8, 5.9, 6.0, 7.1 and 8.2 is 32/5 = 6.4, not 6.3999999999999995.
	if x, ok := sum.GetValueType().(*pb.Value_IntegerValue); ok {
		return Double(float64(x.IntegerValue) / float64(n))
	}
	return Double(sum.GetDoubleValue() / float64(n))
}

// ListDocuments lists a collection's documents in name order, optionally
// with "missing" documents: paths with no document that have descendants.
func (e *Engine) ListDocuments(ctx context.Context, who identity.Identity, req *pb.ListDocumentsRequest) (*pb.ListDocumentsResponse, error) {
	start := time.Now()
	name, parent, err := ParseParentName(req.GetParent())
	if err != nil {
		return nil, err
	}
	if id := req.GetCollectionId(); id != "" {
		if err := ValidateCollectionID(id); err != nil {
			return nil, err
		}
	}
	if req.GetPageSize() < 0 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "Page size must be nonnegative: page_size is %d.", req.GetPageSize())
	}
	if ob := req.GetOrderBy(); ob != "" && ob != "__name__" && ob != "__name__ asc" {
		return nil, fsvalue.Errorf(ErrUnimplemented, "ListDocuments supports only order_by \"__name__\"; got %q.", ob)
	}
	c := consistencyOf(req)
	db := e.db(name)
	unlock := db.readLock()
	defer unlock()
	v, err := db.view(c)
	if err != nil {
		return nil, err
	}
	collPath := req.GetCollectionId()
	if parent != "" {
		collPath = parent + "/" + collPath
	}
	dec := e.authorize(ctx, &AuthzRequest{Database: name, Method: MethodList, Path: collPath, Auth: who, Time: e.now(),
		Query: &QueryInfo{Parent: parent, CollectionID: req.GetCollectionId(),
			Structured: &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: req.GetCollectionId()}}}},
		Get: db.lookupAt(v.t)})
	e.emitRead(who, name, MethodList, collPath, dec, nil, time.Since(start), v)
	if dec.Verdict != Allow {
		return nil, denied(MethodList, collPath, dec)
	}
	prefix := ""
	if parent != "" {
		prefix = parent + "/"
	}
	after, hasAfter := "", false
	if tok := req.GetPageToken(); tok != "" {
		a, ok := parsePageToken(tok, "docs")
		if !ok {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "invalid page token: page_token %q was not returned by a previous ListDocuments call.", fsvalue.Truncate(tok, 40))
		}
		after, hasAfter = string(a), true
	}
	// A page needs only its first size+1 names (one more says a next page
	// exists): the scan keeps that window, sorted, and drops every name
	// after its last one without looking further, so a page of a large
	// collection costs one pass and no sort of every name.
	size := int(req.GetPageSize())
	window := 0
	if size > 0 {
		window = size + 1
	}
	var kept []string
	found := map[string]*pb.Document{} // doc path -> doc (nil: missing but has descendants)
	for rel, d := range db.st.All() {
		if !strings.HasPrefix(rel, prefix) {
			continue
		}
		rest := rel[len(prefix):]
		i := strings.IndexByte(rest, '/')
		if i < 0 || (req.GetCollectionId() != "" && rest[:i] != req.GetCollectionId()) {
			continue
		}
		p := rel
		deep := false
		if j := strings.IndexByte(rest[i+1:], '/'); j >= 0 {
			p, deep = rel[:len(prefix)+i+1+j], true
		}
		if deep && !req.GetShowMissing() {
			continue
		}
		if hasAfter && fsvalue.CompareNames(p, after) <= 0 {
			continue // on an earlier page
		}
		if window > 0 && len(kept) == window && fsvalue.CompareNames(p, kept[window-1]) > 0 {
			continue // beyond this page
		}
		doc := d.At(v.t)
		if doc == nil {
			continue
		}
		_, seen := found[p]
		switch {
		case !deep:
			found[p] = doc
		case !seen:
			found[p] = nil
		}
		if seen || window == 0 {
			continue
		}
		k, _ := slices.BinarySearchFunc(kept, p, fsvalue.CompareNames)
		kept = slices.Insert(kept, k, p)
		if len(kept) > window {
			delete(found, kept[window])
			kept = kept[:window]
		}
	}
	paths := kept
	if window == 0 {
		paths = make([]string, 0, len(found))
		for p := range found {
			paths = append(paths, p)
		}
		slices.SortFunc(paths, fsvalue.CompareNames)
	}
	resp := &pb.ListDocumentsResponse{}
	for _, p := range paths {
		if size > 0 && len(resp.Documents) == size {
			resp.NextPageToken = pageToken("docs", resp.Documents[len(resp.Documents)-1].Name[len(name.Documents())+1:])
			break
		}
		d := found[p]
		if d == nil {
			resp.Documents = append(resp.Documents, &pb.Document{Name: name.DocName(p)})
			continue
		}
		pd, err := project(d, req.GetMask())
		if err != nil {
			return nil, err
		}
		if v.tx != nil {
			v.tx.recordRead(p, d)
		}
		resp.Documents = append(resp.Documents, pd)
	}
	return resp, nil
}

// ListCollectionIds lists the ids of the collections directly under a
// document (or the root) that hold at least one document somewhere below.
// Client SDKs cannot call it in production, so only admin may.
func (e *Engine) ListCollectionIds(ctx context.Context, who identity.Identity, req *pb.ListCollectionIdsRequest) (*pb.ListCollectionIdsResponse, error) {
	name, parent, err := ParseParentName(req.GetParent())
	if err != nil {
		return nil, err
	}
	if !who.IsAdmin() {
		return nil, denied(MethodList, parent, AuthzDecision{Verdict: Deny, Reason: "listing collection ids is an admin-only operation"})
	}
	if req.GetPageSize() < 0 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "page_size must be greater than or equal to zero; got %d.", req.GetPageSize())
	}
	after := ""
	if tok := req.GetPageToken(); tok != "" {
		a, ok := parsePageToken(tok, "ids")
		if !ok {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "invalid page token: page_token %q was not returned by a previous ListCollectionIds call.", fsvalue.Truncate(tok, 40))
		}
		after = a
	}
	c := consistencyOf(req)
	db := e.db(name)
	unlock := db.readLock()
	defer unlock()
	v, err := db.view(c)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if parent != "" {
		prefix = parent + "/"
	}
	ids := map[string]bool{}
	for rel, d := range db.st.All() {
		doc := d.At(v.t)
		if doc == nil || !strings.HasPrefix(rel, prefix) {
			continue
		}
		id, _, _ := strings.Cut(rel[len(prefix):], "/")
		ids[id] = true
	}
	out := make([]string, 0, len(ids))
	for id := range ids {
		if after == "" || id > after {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	resp := &pb.ListCollectionIdsResponse{}
	if size := int(req.GetPageSize()); size > 0 && len(out) > size {
		out = out[:size]
		resp.NextPageToken = pageToken("ids", out[size-1])
	}
	resp.CollectionIds = out
	return resp, nil
}

// PartitionQuery splits a collection-group query ordered by __name__ into
// at most partition_count ranges and returns the split points.
func (e *Engine) PartitionQuery(ctx context.Context, who identity.Identity, req *pb.PartitionQueryRequest) (*pb.PartitionQueryResponse, error) {
	sq := req.GetStructuredQuery()
	if sq == nil {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "A structured query must be given.")
	}
	if req.GetPartitionCount() <= 0 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "partition_count must be positive; got %d.", req.GetPartitionCount())
	}
	if sq.Where != nil || sq.StartAt != nil || sq.EndAt != nil || sq.Limit != nil || sq.Offset != 0 {
		return nil, fsvalue.Errorf(ErrInvalidArgument, "A partitioned query may not have filters, cursors, a limit or an offset.")
	}
	for _, o := range sq.GetOrderBy() {
		if o.GetField().GetFieldPath() != NameField || o.GetDirection() == pb.StructuredQuery_DESCENDING {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "A partitioned query must be ordered by __name__ ascending only.")
		}
	}
	c := consistencyOf(req)
	docs, _, _, err := e.query(ctx, who, req.GetParent(), sq, c)
	if err != nil {
		return nil, err
	}
	k := int(min(req.GetPartitionCount()-1, int64(max(len(docs)-1, 0))))
	var cuts []*pb.Cursor
	for i := 1; i <= k; i++ {
		d := docs[i*len(docs)/(k+1)]
		cuts = append(cuts, &pb.Cursor{Values: []*pb.Value{{ValueType: &pb.Value_ReferenceValue{ReferenceValue: d.Name}}}})
	}
	start := 0
	if tok := req.GetPageToken(); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 {
			return nil, fsvalue.Errorf(ErrInvalidArgument, "Invalid page_token %q.", tok)
		}
		start = min(n, len(cuts))
	}
	cuts = cuts[start:]
	resp := &pb.PartitionQueryResponse{}
	if size := int(req.GetPageSize()); size > 0 && len(cuts) > size {
		next := start + size
		resp.NextPageToken = strconv.Itoa(next)
		cuts = cuts[:size]
	}
	resp.Partitions = cuts
	return resp, nil
}

var _ = wrapperspb.Int32

// pageTokenPrefix marks the page tokens this engine issues, so a token from
// elsewhere (another server, a mangled copy) is rejected instead of
// silently restarting or skipping a listing.
const pageTokenPrefix = "pyric1."

// pageToken returns an opaque token for a listing of kind that resumes
// after key.
func pageToken(kind, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenPrefix + kind + "." + key))
}

// parsePageToken returns the key a token of kind resumes after.
func parsePageToken(tok, kind string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", false
	}
	key, ok := strings.CutPrefix(string(b), pageTokenPrefix+kind+".")
	return key, ok
}
