package storage

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/sandbox/service"
)

// PutRequest is one upload of a whole object.
type PutRequest struct {
	Bucket, Name string
	Attrs        Attrs
	// MediaType is the content type the bytes were sent with; the stored
	// contentType is Attrs.ContentType when set, else MediaType, else
	// application/octet-stream (production's precedence).
	MediaType  string
	Body       io.Reader `json:"-"`
	Conditions Conditions
	// NewToken mints a download token, as Firebase (v0) uploads do.
	NewToken bool
	// ExpectMD5 and ExpectCRC32C, when set (base64), are the checksums the
	// client computed; bytes that hash otherwise are rejected.
	ExpectMD5, ExpectCRC32C string
}

// Put stores an object. The bytes are streamed to a temporary blob and
// become visible, with the metadata, only when the rules allow the write
// and the preconditions hold.
func (e *Engine) Put(who identity.Identity, req PutRequest) (*Object, error) {
	start := time.Now()
	if err := validate(req.Bucket, req.Name); err != nil {
		return nil, err
	}
	w, err := e.blobs.create()
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	if req.Body != nil {
		if _, err := copyIn(w, io.LimitReader(req.Body, e.opts.MaxObjectSize+1)); err != nil {
			w.abort()
			if CodeOf(err) == DataLoss { // a copy's or compose's source
				return nil, err
			}
			return nil, errorf(InvalidArgument, "reading the upload: %v", err)
		}
	}
	if w.size() > e.opts.MaxObjectSize {
		w.abort()
		return nil, errorf(TooLarge, "The object exceeds the maximum size of %d bytes.", e.opts.MaxObjectSize)
	}
	return e.commit(who, &req, w, start)
}

// commit makes a written blob the object req names. It consumes w.
func (e *Engine) commit(who identity.Identity, req *PutRequest, w blobWriter, start time.Time) (*Object, error) {
	md5sum, crc := w.sums()
	if (req.ExpectMD5 != "" && req.ExpectMD5 != md5sum) || (req.ExpectCRC32C != "" && req.ExpectCRC32C != crc) {
		w.abort()
		return nil, errorf(InvalidArgument, "The checksum of the uploaded bytes (md5 %s, crc32c %s) does not match the one given (md5 %s, crc32c %s).",
			md5sum, crc, orNone(req.ExpectMD5), orNone(req.ExpectCRC32C))
	}
	if err := w.finish(); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	now := e.env.Now().UTC()
	e.lockSettled(req.Bucket, req.Name)
	cur := e.lookup(req.Bucket, req.Name)
	o := &Object{Bucket: req.Bucket, Name: req.Name, Metageneration: 1, Size: w.size(), TimeCreated: now, Updated: now}
	o.MD5Hash, o.CRC32C = md5sum, crc
	req.Attrs.apply(o)
	if o.ContentType == "" {
		o.ContentType = req.MediaType
	}
	if o.ContentType == "" {
		o.ContentType = DefaultContentType
	}
	if req.NewToken && o.Metadata[TokenKey] == "" {
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		o.Metadata[TokenKey] = e.newToken()
	}
	method := srules.Create
	if cur != nil {
		method = srules.Update
	}
	if err := checkMetadata(o); err != nil {
		e.mu.Unlock()
		w.abort()
		return nil, err
	}
	dec := e.decide(who, method, req.Bucket, req.Name, cur, o)
	err := dec.err()
	if err == nil {
		err = req.Conditions.check(cur)
	}
	var changed *event.Event
	var wait service.LogWait
	var pc pendingCommit
	views := e.viewsOf(cur, o)
	if err == nil {
		o.Generation = e.nextGen()
		var held []service.LogChange
		changed, held = e.heldChange(who, OpObjectPut, views)
		if err = w.commit(o.Generation); err == nil {
			if wait, err = e.queuePersist(o.Bucket, o.Name, o, held...); err != nil {
				e.blobs.remove(o.Generation)
			}
		}
		if err == nil {
			pc = pendingCommit{prev: cur, newBucket: e.buckets[o.Bucket] == nil}
			e.bucketFor(o.Bucket).put(o)
			if wait != nil {
				e.pending.add(objectID{o.Bucket, o.Name}, pc)
			} else if cur != nil {
				e.blobs.remove(cur.Generation)
			}
		} else {
			err = fmt.Errorf("storage: commit %s/%s: %w", o.Bucket, o.Name, err)
		}
	} else {
		w.abort()
	}
	if wait != nil {
		e.mu.Unlock()
		return e.settle(who, method, OpObjectPut, o, pc, wait, dec, start, views, changed)
	}
	// The events are emitted under the lock, so that changes of one
	// object are emitted in the order they were made (triggers rely on it).
	e.emitOpViews(who, method, req.Bucket, req.Name, dec, start, views, err)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	e.emitCommitted(changed, who, OpObjectPut, views)
	e.mu.Unlock()
	return o.clone(), nil
}

// settle ends a commit whose record was queued (queuePersist) and whose
// object is pending (pending.go): it waits for the record outside e.mu,
// puts back the version before when the log could not take it, emits the
// commit's events and then settles the object. The events are emitted
// before the object settles, so any later change of the object, which
// waits for that, is emitted after them (triggers rely on the order).
func (e *Engine) settle(who identity.Identity, method, op string, o *Object, pc pendingCommit, wait service.LogWait, dec decision, start time.Time, views *eventViews, changed *event.Event) (*Object, error) {
	err := wait.Wait()
	if err != nil {
		e.rollback(o, pc)
		err = fmt.Errorf("storage: commit %s/%s: %w", o.Bucket, o.Name, err)
	} else if pc.prev != nil && !pc.sameBlob {
		e.blobs.remove(pc.prev.Generation)
	}
	e.emitOpViews(who, method, o.Bucket, o.Name, dec, start, views, err)
	if err == nil {
		e.emitCommitted(changed, who, op, views)
	}
	e.pending.done(objectID{o.Bucket, o.Name})
	if err != nil {
		return nil, err
	}
	return o.clone(), nil
}

// newToken mints a download token shaped like production's (a UUID),
// from the sandbox's id source so deterministic sandboxes replay it.
func (e *Engine) newToken() string {
	var b [16]byte
	if e.env.NewID != nil {
		s := sha256.Sum256([]byte(e.env.NewID()))
		copy(b[:], s[:])
	} else if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// ReadRequest names an object to read.
type ReadRequest struct {
	Bucket, Name string
	// Generation, when non-zero, must be the live generation.
	Generation int64
	// Token is a download token; a valid one grants the read whatever the
	// rules say, as in production.
	Token      string
	Conditions Conditions
	// EnsureToken mints a download token when the object has none (the
	// Firebase API's metadata read does, so getDownloadURL works on
	// objects uploaded through GCS).
	EnsureToken bool
	// Shared returns the stored version itself, not a copy, for a caller
	// that only reads it (a response's encoder), as ListRequest.Shared.
	Shared bool
}

// Stat returns an object's metadata.
func (e *Engine) Stat(who identity.Identity, req ReadRequest) (*Object, error) {
	o, r, err := e.read(who, req, false)
	if r != nil {
		r.Close()
	}
	return o, err
}

// Reader reads an object's bytes at any offset (ReadAt), or in order
// (Read, Seek), which checks the stored checksums once every byte was
// read from the start: a Read that would complete damaged bytes returns
// a DataLoss error instead, and Err reports it. See verify.go.
type Reader interface {
	io.ReaderAt
	io.ReadSeeker
	io.Closer
	Err() error
}

// Open returns an object's metadata and a reader of the bytes of that
// generation (it stays readable even if the object is replaced meanwhile).
func (e *Engine) Open(who identity.Identity, req ReadRequest) (*Object, Reader, error) {
	return e.read(who, req, true)
}

func (e *Engine) read(who identity.Identity, req ReadRequest, body bool) (*Object, Reader, error) {
	start := time.Now()
	if err := validate(req.Bucket, req.Name); err != nil {
		return nil, nil, err
	}
	e.rlockSettled(req.Bucket, req.Name)
	cur := e.lookup(req.Bucket, req.Name)
	var dec decision
	if cur != nil && !who.IsAdmin() && cur.HasToken(req.Token) {
		dec = decision{allowed: true, by: "token", reason: "a valid download token grants the read"}
	} else {
		dec = e.decide(who, srules.Get, req.Bucket, req.Name, cur, nil)
	}
	err := dec.err()
	if err == nil {
		switch {
		case cur == nil || (req.Generation != 0 && req.Generation != cur.Generation):
			err = objectNotFound(req.Bucket, req.Name)
		default:
			err = req.Conditions.check(cur)
		}
	}
	var r *objectReader
	var o *Object
	if err == nil {
		o = cur
		if !req.Shared {
			o = cur.clone()
		}
		if body {
			r, err = e.openObject(o)
		}
	}
	e.mu.RUnlock()
	e.emitOp(who, srules.Get, req.Bucket, req.Name, dec, start, cur, nil, err)
	if err != nil {
		return nil, nil, err
	}
	if req.EnsureToken && len(o.DownloadTokens()) == 0 {
		if t, err := e.ensureToken(req.Bucket, req.Name, o.Generation); err == nil && t != nil {
			e.emitChange(who, OpTokenCreate, o, t)
			o = t
		}
	}
	if r == nil {
		return o, nil, nil
	}
	return o, r, nil
}

// ensureToken adds a download token to an object without one; it is not a
// metadata version (metageneration stays).
func (e *Engine) ensureToken(bkt, name string, gen int64) (*Object, error) {
	e.lockSettled(bkt, name)
	defer e.mu.Unlock()
	cur := e.lookup(bkt, name)
	if cur == nil || cur.Generation != gen {
		return nil, nil
	}
	if len(cur.DownloadTokens()) > 0 {
		return cur.clone(), nil
	}
	next := cur.clone()
	if next.Metadata == nil {
		next.Metadata = map[string]string{}
	}
	next.Metadata[TokenKey] = e.newToken()
	if err := e.persist(bkt, name, next); err != nil {
		return nil, err
	}
	e.bucketFor(bkt).put(next)
	return next.clone(), nil
}

// Update patches an object's metadata: metageneration and updated move,
// generation and the bytes stay.
func (e *Engine) Update(who identity.Identity, bkt, name string, attrs Attrs, conds Conditions) (*Object, error) {
	return e.mutate(who, bkt, name, conds, func(o *Object) { attrs.apply(o) })
}

// AddToken mints one more download token for an object.
func (e *Engine) AddToken(who identity.Identity, bkt, name string) (*Object, error) {
	return e.mutate(who, bkt, name, Conditions{}, func(o *Object) {
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		toks := append(o.DownloadTokens(), e.newToken())
		o.Metadata[TokenKey] = strings.Join(toks, ",")
	})
}

// RevokeToken removes one download token; links carrying it stop working.
func (e *Engine) RevokeToken(who identity.Identity, bkt, name, token string) (*Object, error) {
	return e.mutate(who, bkt, name, Conditions{}, func(o *Object) {
		var keep []string
		for _, t := range o.DownloadTokens() {
			if t != token {
				keep = append(keep, t)
			}
		}
		if len(keep) == 0 {
			delete(o.Metadata, TokenKey)
		} else {
			o.Metadata[TokenKey] = strings.Join(keep, ",")
		}
	})
}

func (e *Engine) mutate(who identity.Identity, bkt, name string, conds Conditions, change func(*Object)) (*Object, error) {
	start := time.Now()
	if err := validate(bkt, name); err != nil {
		return nil, err
	}
	e.lockSettled(bkt, name)
	cur := e.lookup(bkt, name)
	var next *Object
	if cur != nil {
		next = cur.clone()
	} else {
		next = &Object{Bucket: bkt, Name: name}
	}
	change(next)
	if err := checkMetadata(next); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	next.Metageneration++
	next.Updated = e.env.Now().UTC()
	dec := e.decide(who, srules.Update, bkt, name, cur, next)
	err := dec.err()
	if err == nil && cur == nil {
		err = objectNotFound(bkt, name)
	}
	if err == nil {
		err = conds.check(cur)
	}
	var changed *event.Event
	var wait service.LogWait
	var pc pendingCommit
	views := e.viewsOf(cur, next)
	if err == nil {
		// Queued as an upload's record is (pending.go): concurrent
		// changes share a write of the log, outside e.mu.
		var held []service.LogChange
		changed, held = e.heldChange(who, OpMetadataUpdate, views)
		if wait, err = e.queuePersist(bkt, name, next, held...); err == nil {
			e.bucketFor(bkt).put(next)
			if wait != nil {
				pc = pendingCommit{prev: cur, sameBlob: true}
				e.pending.add(objectID{bkt, name}, pc)
			}
		}
	}
	if wait != nil {
		e.mu.Unlock()
		return e.settle(who, srules.Update, OpMetadataUpdate, next, pc, wait, dec, start, views, changed)
	}
	e.emitOpViews(who, srules.Update, bkt, name, dec, start, views, err)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	e.emitCommitted(changed, who, OpMetadataUpdate, views)
	e.mu.Unlock()
	return next.clone(), nil
}

// Delete removes an object; a missing one is ErrNotFound, as production
// answers.
func (e *Engine) Delete(who identity.Identity, bkt, name string, conds Conditions) error {
	start := time.Now()
	if err := validate(bkt, name); err != nil {
		return err
	}
	e.lockSettled(bkt, name)
	cur := e.lookup(bkt, name)
	dec := e.decide(who, srules.Delete, bkt, name, cur, nil)
	err := dec.err()
	if err == nil && cur == nil {
		err = objectNotFound(bkt, name)
	}
	if err == nil {
		err = conds.check(cur)
	}
	var changed *event.Event
	var wait service.LogWait
	views := e.viewsOf(cur, nil)
	if err == nil {
		// Queued as an upload's record is (pending.go); the object stays
		// in the state, pending, until its record is durable.
		var held []service.LogChange
		changed, held = e.heldChange(who, OpObjectDelete, views)
		if wait, err = e.queuePersist(bkt, name, nil, held...); err == nil {
			if wait != nil {
				e.pending.add(objectID{bkt, name}, pendingCommit{prev: cur})
			} else {
				e.buckets[bkt].del(name)
				e.blobs.remove(cur.Generation)
			}
		}
	}
	if wait != nil {
		e.mu.Unlock()
		return e.settleDelete(who, cur, wait, dec, start, views, changed)
	}
	e.emitOpViews(who, srules.Delete, bkt, name, dec, start, views, err)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	e.emitCommitted(changed, who, OpObjectDelete, views)
	e.mu.Unlock()
	return nil
}

// settleDelete ends a delete of cur whose record was queued, as settle
// ends a commit: once the record is durable it takes cur out of the
// state and removes its blob (a lost record leaves both as they were),
// then emits the delete's events and settles the object.
func (e *Engine) settleDelete(who identity.Identity, cur *Object, wait service.LogWait, dec decision, start time.Time, views *eventViews, changed *event.Event) error {
	err := wait.Wait()
	if err == nil {
		e.mu.Lock()
		if b := e.buckets[cur.Bucket]; b != nil && b.objects[cur.Name] == cur {
			b.del(cur.Name)
		}
		e.mu.Unlock()
		e.blobs.remove(cur.Generation)
	} else {
		err = fmt.Errorf("storage: delete %s/%s: %w", cur.Bucket, cur.Name, err)
	}
	e.emitOpViews(who, srules.Delete, cur.Bucket, cur.Name, dec, start, views, err)
	if err == nil {
		e.emitCommitted(changed, who, OpObjectDelete, views)
	}
	e.pending.done(objectID{cur.Bucket, cur.Name})
	return err
}

// ListRequest asks for a page of a bucket's objects.
type ListRequest struct {
	Bucket    string
	Prefix    string
	Delimiter string
	// MaxResults caps items and prefixes together; 0 or more than 1000
	// means 1000.
	MaxResults int
	PageToken  string
	// StartOffset and EndOffset bound the names listed (inclusive,
	// exclusive), as GCS's startOffset/endOffset do.
	StartOffset, EndOffset string
	// SkipPrefixObject leaves out an object named exactly Prefix (the
	// Firebase API never lists the scanned reference itself).
	SkipPrefixObject bool
	// IncludeTrailingDelimiter also lists, as an item, an object named
	// exactly like a rolled-up prefix (GCS's includeTrailingDelimiter).
	IncludeTrailingDelimiter bool
	// MatchGlob keeps only names matching a GCS glob (* and ? within a
	// segment, ** across segments, [set], {a,b}).
	MatchGlob string
	// Shared returns the stored objects themselves as Items, not copies,
	// for a caller that only reads them (a listing's encoder): the
	// engine never changes a stored object (a change stores a new one),
	// and a copy each cost a listing an allocation and a few hundred
	// bytes per object.
	Shared bool
}

// ListResult is one page.
type ListResult struct {
	Items         []*Object
	Prefixes      []string
	NextPageToken string
}

// MaxListResults is the largest page.
const MaxListResults = 1000

// List returns a page of objects under a prefix. With a delimiter, names
// with the delimiter after the prefix are rolled up into one sorted,
// deduplicated prefix each. The page token is the resume point, so it
// stays valid while objects come and go.
func (e *Engine) List(who identity.Identity, req ListRequest) (*ListResult, error) {
	start := time.Now()
	if err := ValidateBucket(req.Bucket); err != nil {
		return nil, err
	}
	from := req.Prefix
	if req.StartOffset > from {
		from = req.StartOffset
	}
	if req.PageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		if err != nil || !strings.HasPrefix(string(b), "n:") {
			return nil, errorf(InvalidArgument, "Invalid page token: %q", req.PageToken)
		}
		if t := string(b[2:]); t > from {
			from = t
		}
	}
	max := req.MaxResults
	if max <= 0 || max > MaxListResults {
		max = MaxListResults
	}
	var glob *regexp.Regexp
	if req.MatchGlob != "" {
		var err error
		if glob, err = compileGlob(req.MatchGlob); err != nil {
			return nil, err
		}
	}
	// A list has no resource: the rules decide before the index is locked.
	dec := e.decide(who, srules.List, req.Bucket, req.Prefix, nil, nil)
	err := dec.err()
	e.mu.Lock() // the index is merged in place
	res := &ListResult{}
	if err == nil {
		var names []string
		var objs map[string]*Object
		if b := e.buckets[req.Bucket]; b != nil {
			names, objs = b.names(), b.objects
		}
		i := sort.SearchStrings(names, from)
		count := 0
		for i < len(names) {
			n := names[i]
			if !strings.HasPrefix(n, req.Prefix) || (req.EndOffset != "" && n >= req.EndOffset) {
				break
			}
			if e.visible(req.Bucket, n, objs[n]) == nil { // new, pending
				i++
				continue
			}
			if count == max {
				res.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte("n:" + n))
				break
			}
			if glob != nil && !glob.MatchString(n) {
				i++
				continue
			}
			if req.Delimiter != "" {
				rest := n[len(req.Prefix):]
				if k := strings.Index(rest, req.Delimiter); k >= 0 {
					p := req.Prefix + rest[:k+len(req.Delimiter)]
					res.Prefixes = append(res.Prefixes, p)
					count++
					if o := e.visible(req.Bucket, p, objs[p]); req.IncludeTrailingDelimiter && o != nil {
						res.Items = append(res.Items, req.item(o))
					}
					next := successor(p)
					if next == "" {
						break
					}
					i = sort.SearchStrings(names, next)
					continue
				}
			}
			if !(req.SkipPrefixObject && n == req.Prefix) {
				res.Items = append(res.Items, req.item(e.visible(req.Bucket, n, objs[n])))
				count++
			}
			i++
		}
	}
	e.mu.Unlock()
	e.emitOp(who, srules.List, req.Bucket, req.Prefix, dec, start, nil, nil, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// item is how a listing returns o: a copy, or o itself when Shared.
func (req *ListRequest) item(o *Object) *Object {
	if req.Shared {
		return o
	}
	return o.clone()
}

// successor is the smallest string greater than every string with prefix
// p, or "" when there is none (p is all 0xff bytes).
func successor(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// CopyRequest copies (or rewrites) an object.
type CopyRequest struct {
	SrcBucket, SrcName string
	SrcGeneration      int64
	DstBucket, DstName string
	// Attrs, when non-nil, replace the source's metadata on the copy
	// (what a copy request body carries); nil copies the source's.
	Attrs *Attrs
	// Conditions apply to the destination, SrcConditions to the source.
	Conditions, SrcConditions Conditions
}

// Copy writes a new generation of the destination holding the source's
// bytes.
func (e *Engine) Copy(who identity.Identity, req CopyRequest) (*Object, error) {
	src, r, err := e.Open(who, ReadRequest{Bucket: req.SrcBucket, Name: req.SrcName, Generation: req.SrcGeneration, Conditions: req.SrcConditions})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	put := PutRequest{Bucket: req.DstBucket, Name: req.DstName, Conditions: req.Conditions, Body: r}
	if req.Attrs != nil {
		put.Attrs = *req.Attrs
		put.MediaType = src.ContentType
	} else {
		put.Attrs = attrsOf(src)
	}
	return e.Put(who, put)
}

// attrsOf returns an object's client-settable metadata as Attrs.
func attrsOf(o *Object) Attrs {
	s := func(v string) *string { return &v }
	a := Attrs{
		ContentType: s(o.ContentType), ContentEncoding: s(o.ContentEncoding),
		ContentDisposition: s(o.ContentDisposition), ContentLanguage: s(o.ContentLanguage),
		CacheControl: s(o.CacheControl),
	}
	for k, v := range o.Metadata {
		if a.Metadata == nil {
			a.Metadata = map[string]*string{}
		}
		a.Metadata[k] = s(v)
	}
	return a
}

func sortStrings(s []string) { sort.Strings(s) }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ComposeSource is one source object of a compose.
type ComposeSource struct {
	Name       string
	Generation int64
	// GenerationMatch, when set, must be the source's live generation.
	GenerationMatch *int64
}

// MaxComposeSources is GCS's limit of source objects per compose.
const MaxComposeSources = 32

// Compose writes the concatenation of up to 32 objects of one bucket as a
// new generation of the destination, with attrs as its metadata.
func (e *Engine) Compose(who identity.Identity, bkt, name string, sources []ComposeSource, attrs Attrs, conds Conditions) (*Object, error) {
	if len(sources) == 0 || len(sources) > MaxComposeSources {
		return nil, errorf(InvalidArgument, "A compose takes 1 to %d source objects, not %d.", MaxComposeSources, len(sources))
	}
	readers := make([]io.Reader, 0, len(sources))
	for _, s := range sources {
		_, r, err := e.Open(who, ReadRequest{Bucket: bkt, Name: s.Name, Generation: s.Generation, Conditions: Conditions{GenerationMatch: s.GenerationMatch}})
		if err != nil {
			return nil, err
		}
		defer r.Close()
		readers = append(readers, r)
	}
	return e.Put(who, PutRequest{Bucket: bkt, Name: name, Attrs: attrs, Body: io.MultiReader(readers...), Conditions: conds})
}

// compileGlob turns a GCS matchGlob pattern into an anchored regexp.
func compileGlob(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(g[i:], ']')
			if j < 0 {
				return nil, errorf(InvalidArgument, "Invalid matchGlob %q: unclosed [.", g)
			}
			set := g[i+1 : i+j]
			if strings.HasPrefix(set, "!") {
				set = "^" + set[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(set, `\`, `\\`) + "]")
			i += j
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, errorf(InvalidArgument, "Invalid matchGlob %q: unclosed {.", g)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errorf(InvalidArgument, "Invalid matchGlob %q: %v", g, err)
	}
	return re, nil
}
