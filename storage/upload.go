package storage

import (
	"io"
	"sync"
	"time"

	"github.com/pyric/pyric/identity"
	srules "github.com/pyric/pyric/rules/storage"
)

// Upload is a resumable upload session: bytes arrive in chunks at
// increasing offsets into a temporary blob, and the object appears only
// when the session is finalized. The session's URL is its capability, as
// in production; rules are decided for the uploader who started it.
type Upload struct {
	ID string

	e       *Engine
	who     identity.Identity
	req     PutRequest
	created time.Time

	mu    sync.Mutex
	w     blobWriter
	total int64 // declared total size, -1 when unknown
	state uploadState
	obj   *Object // the object, once final
}

type uploadState int

const (
	uploadActive uploadState = iota
	uploadFinal
	uploadCancelled
)

// StartUpload opens a resumable upload session for req (its Body is
// ignored). total is the declared size, -1 when unknown. The rules are
// asked at once with the declared size, so a write they deny fails before
// any byte is sent, and asked again with the real bytes at finalize.
func (e *Engine) StartUpload(who identity.Identity, req PutRequest, total int64) (*Upload, error) {
	start := time.Now()
	if err := validate(req.Bucket, req.Name); err != nil {
		return nil, err
	}
	if total > e.opts.MaxObjectSize {
		return nil, errorf(TooLarge, "The object exceeds the maximum size of %d bytes.", e.opts.MaxObjectSize)
	}
	if !who.IsAdmin() {
		e.mu.RLock()
		cur := e.lookup(req.Bucket, req.Name)
		o := &Object{Bucket: req.Bucket, Name: req.Name, Size: max(total, 0)}
		req.Attrs.apply(o)
		if o.ContentType == "" {
			o.ContentType = req.MediaType
		}
		if o.ContentType == "" {
			o.ContentType = DefaultContentType
		}
		method := srules.Create
		if cur != nil {
			method = srules.Update
		}
		dec := e.decide(who, method, req.Bucket, req.Name, cur, o)
		e.mu.RUnlock()
		if err := dec.err(); err != nil {
			e.emitOp(who, method, req.Bucket, req.Name, dec, start, err)
			return nil, err
		}
	}
	w, err := e.blobs.create()
	if err != nil {
		return nil, err
	}
	e.uploadsMu.Lock()
	defer e.uploadsMu.Unlock()
	if len(e.uploads) >= e.opts.MaxUploads {
		e.evictUploads()
		if len(e.uploads) >= e.opts.MaxUploads {
			w.abort()
			return nil, errorf(TooLarge, "Too many resumable uploads in progress (%d).", len(e.uploads))
		}
	}
	req.Body = nil
	u := &Upload{ID: e.uploadID(), e: e, who: who, req: req, created: e.env.Now(), w: w, total: total}
	e.uploads[u.ID] = u
	return u, nil
}

// uploadTTL is how long a session lives (GCS: a week).
const uploadTTL = 7 * 24 * time.Hour

// evictUploads drops finished and expired sessions; the caller holds
// uploadsMu. A session busy with a chunk is in use and is skipped, so a
// slow client never stalls the others.
func (e *Engine) evictUploads() {
	now := e.env.Now()
	for id, u := range e.uploads {
		if !u.mu.TryLock() {
			continue
		}
		if u.state != uploadActive || now.Sub(u.created) > uploadTTL {
			u.cancelLocked()
			delete(e.uploads, id)
		}
		u.mu.Unlock()
	}
}

// dropUploads empties the session table and discards every session
// outside uploadsMu (a chunk in flight finishes first).
func (e *Engine) dropUploads() {
	e.uploadsMu.Lock()
	all := e.uploads
	e.uploads = map[string]*Upload{}
	e.uploadsMu.Unlock()
	for _, u := range all {
		u.discard()
	}
}

func (e *Engine) uploadID() string {
	t := e.newToken()
	return t[:8] + t[9:13] + t[14:18] + t[19:23] + t[24:]
}

// Upload returns the session with the id.
func (e *Engine) Upload(id string) (*Upload, error) {
	e.uploadsMu.Lock()
	u := e.uploads[id]
	e.uploadsMu.Unlock()
	if u == nil {
		return nil, errorf(NotFound, "No such upload: %s", id)
	}
	return u, nil
}

// Bucket and Name say what the session uploads.
func (u *Upload) Bucket() string { return u.req.Bucket }

// Name is the object the session writes.
func (u *Upload) Name() string { return u.req.Name }

// Received is the number of bytes persisted so far.
func (u *Upload) Received() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == uploadFinal && u.obj != nil {
		return u.obj.Size
	}
	return u.w.size()
}

// Total is the declared size, -1 when unknown.
func (u *Upload) Total() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.total
}

// SetTotal declares the total size (GCS's Content-Range: a-b/total).
func (u *Upload) SetTotal(total int64) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.total >= 0 && u.total != total {
		return errorf(InvalidArgument, "The upload's size was declared as %d, not %d.", u.total, total)
	}
	if total < u.w.size() {
		return errorf(InvalidArgument, "The upload's size %d is below the %d bytes already received.", total, u.w.size())
	}
	u.total = total
	return nil
}

// ExpectCRC32C sets the checksum the client says the whole upload has
// (GCS sends it with the final chunk).
func (u *Upload) ExpectCRC32C(crc string) {
	u.mu.Lock()
	u.req.ExpectCRC32C = crc
	u.mu.Unlock()
}

// State is "active", "final" or "cancelled" (X-Goog-Upload-Status).
func (u *Upload) State() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return [...]string{"active", "final", "cancelled"}[u.state]
}

// Object is the finalized object, or nil.
func (u *Upload) Object() *Object {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.obj == nil {
		return nil
	}
	return u.obj.clone()
}

func (u *Upload) usable() error {
	switch u.state {
	case uploadCancelled:
		return errorf(Cancelled, "The upload %s was cancelled.", u.ID)
	case uploadFinal:
		return errorf(Conflict, "The upload %s is already finalized.", u.ID)
	}
	return nil
}

// Append writes a chunk that starts at offset. Bytes below what was
// already received are skipped (a client retrying a chunk), a gap is an
// error. It returns the bytes received after the chunk.
func (u *Upload) Append(offset int64, r io.Reader) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.usable(); err != nil {
		return 0, err
	}
	have := u.w.size()
	if offset > have {
		return have, errorf(InvalidArgument, "The upload offset %d is past the %d bytes received so far.", offset, have)
	}
	if offset < 0 {
		return have, errorf(InvalidArgument, "The upload offset %d is negative.", offset)
	}
	if skip := have - offset; skip > 0 {
		if n, _ := io.CopyN(io.Discard, r, skip); n < skip {
			return have, nil
		}
	}
	limit := u.e.opts.MaxObjectSize - have
	if u.total >= 0 {
		limit = u.total - have
	}
	n, err := io.Copy(u.w, io.LimitReader(r, limit+1))
	if n > limit {
		// The excess byte was written; the session is unusable now.
		u.cancelLocked()
		if u.total >= 0 {
			return have, errorf(InvalidArgument, "The upload carries more than its declared %d bytes.", u.total)
		}
		return have, errorf(TooLarge, "The object exceeds the maximum size of %d bytes.", u.e.opts.MaxObjectSize)
	}
	if err != nil {
		// What arrived before the failure is kept: a query reports it and
		// the client resumes from there.
		return u.w.size(), nil
	}
	return u.w.size(), nil
}

// Finalize commits the session's bytes as the object, asking the rules
// with the real size and checksums. A session that is already final
// returns its object again.
func (u *Upload) Finalize() (*Object, error) {
	start := time.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == uploadFinal {
		return u.obj.clone(), nil
	}
	if err := u.usable(); err != nil {
		return nil, err
	}
	if u.total >= 0 && u.w.size() != u.total {
		return nil, errorf(InvalidArgument, "The upload is incomplete: %d of %d bytes received.", u.w.size(), u.total)
	}
	o, err := u.e.commit(u.who, &u.req, u.w, start)
	if err != nil {
		// The blob was consumed; the session cannot be resumed (it is
		// evicted with the other finished sessions).
		u.state = uploadCancelled
		return nil, err
	}
	u.state, u.obj = uploadFinal, o
	return o.clone(), nil
}

// Cancel ends the session; its bytes are discarded.
func (u *Upload) Cancel() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == uploadFinal {
		return errorf(Conflict, "The upload %s is already finalized.", u.ID)
	}
	u.cancelLocked()
	return nil
}

func (u *Upload) cancelLocked() {
	if u.state == uploadActive {
		u.w.abort()
	}
	u.state = uploadCancelled
}

// discard releases the session's temporary blob.
func (u *Upload) discard() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cancelLocked()
}
