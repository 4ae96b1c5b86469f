package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pyric/pyric/identity"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/sandbox/service"
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
		e.rlockSettled(req.Bucket, req.Name)
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
			e.emitOp(who, method, req.Bucket, req.Name, dec, start, cur, o, err)
			return nil, err
		}
	}
	e.uploadsMu.Lock()
	defer e.uploadsMu.Unlock()
	if len(e.uploads) >= e.opts.MaxUploads {
		e.evictUploads()
		if len(e.uploads) >= e.opts.MaxUploads {
			return nil, errorf(TooLarge, "Too many resumable uploads in progress (%d).", len(e.uploads))
		}
	}
	req.Body = nil
	id := e.uploadID()
	w, err := e.blobs.createSession(id)
	if err != nil {
		return nil, fmt.Errorf("storage: upload session: %w", err)
	}
	u := &Upload{ID: id, e: e, who: who, req: req, created: e.env.Now(), w: w, total: total}
	if err := e.persistUpload(u.record()); err != nil {
		w.abort()
		return nil, fmt.Errorf("storage: upload session: %w", err)
	}
	e.uploads[u.ID] = u
	return u, nil
}

// Keys of upload sessions in the service's Bucket: u/<id>.
const uploadPrefix = "u/"

// uploadRecord is what survives a restart of a session: who started it for
// what, and how many bytes were acknowledged.
type uploadRecord struct {
	ID       string            `json:"id"`
	Who      identity.Identity `json:"who"`
	Req      PutRequest        `json:"req"`
	Total    int64             `json:"total"`
	Created  time.Time         `json:"created"`
	Received int64             `json:"received"`
	// CRC32C is the CRC32C of the Received bytes (absent in records of
	// earlier versions), checked when the session resumes.
	CRC32C *uint32 `json:"crc32c,omitempty"`
}

// record is the session's durable state; the caller holds u.mu or owns u.
func (u *Upload) record() *uploadRecord {
	crc := u.w.crc32c()
	return &uploadRecord{ID: u.ID, Who: u.who, Req: u.req, Total: u.total, Created: u.created, Received: u.w.size(), CRC32C: &crc}
}

func (e *Engine) persistUpload(rec *uploadRecord) error {
	if e.env.Bucket == nil {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return e.env.Bucket.Update(func(tx service.Tx) error { return tx.Put([]byte(uploadPrefix+rec.ID), b) })
}

func (e *Engine) forgetUpload(id string) {
	if e.env.Bucket != nil {
		e.env.Bucket.Update(func(tx service.Tx) error { return tx.Delete([]byte(uploadPrefix + id)) })
	}
}

// loadUploads resumes the sessions a previous run left, each from its
// acknowledged size, and drops session blobs without a record.
func (e *Engine) loadUploads() error {
	if e.env.Bucket == nil {
		for _, id := range e.blobs.sessions() {
			e.blobs.removeSession(id)
		}
		return nil
	}
	var recs []*uploadRecord
	err := e.env.Bucket.View(func(tx service.Tx) error {
		return tx.ForEach([]byte(uploadPrefix), func(_, v []byte) error {
			rec := new(uploadRecord)
			if json.Unmarshal(v, rec) == nil && rec.ID != "" {
				recs = append(recs, rec)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("storage: load uploads: %w", err)
	}
	live := map[string]bool{}
	for _, rec := range recs {
		w, err := e.blobs.resumeSession(rec.ID, rec.Received, rec.CRC32C)
		var sd *sessionDamage
		if errors.As(err, &sd) {
			// The client's next chunk gets 404 and starts the upload
			// over; the file is the user's data: kept, not deleted.
			msg := fmt.Sprintf("storage: the resumable upload %s of %s/%s is damaged: %s; it is dropped (the client must start the upload again)", rec.ID, rec.Req.Bucket, rec.Req.Name, sd.problem)
			if to, kerr := e.blobs.keepSessionAside(rec.ID); kerr == nil {
				msg += ", and its file is kept as " + to
			} else {
				msg += fmt.Sprintf(", and its file could not be moved aside (%v): left as it is", kerr)
				live[rec.ID] = true // not removed below
			}
			if e.env.Warn != nil {
				e.env.Warn(msg)
			}
			e.forgetUpload(rec.ID)
			continue
		}
		if err != nil || (e.opts.MaxUploads > 0 && len(e.uploads) >= e.opts.MaxUploads) {
			if w != nil {
				w.abort()
			}
			e.forgetUpload(rec.ID)
			continue
		}
		e.uploads[rec.ID] = &Upload{ID: rec.ID, e: e, who: rec.Who, req: rec.Req, created: rec.Created, w: w, total: rec.Total}
		live[rec.ID] = true
	}
	for _, id := range e.blobs.sessions() {
		if !live[id] {
			e.blobs.removeSession(id)
		}
	}
	return nil
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

// dropUploads empties the session table and discards (or, with keep,
// releases for the next start) every session outside uploadsMu (a chunk in
// flight finishes first).
func (e *Engine) dropUploads(keep bool) {
	e.uploadsMu.Lock()
	all := e.uploads
	e.uploads = map[string]*Upload{}
	e.uploadsMu.Unlock()
	for _, u := range all {
		if keep {
			u.release()
		} else {
			u.discard()
		}
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
	n, err := copyIn(u.w, io.LimitReader(r, limit+1))
	if n > 0 && n <= limit {
		// What arrived is acknowledged only once it is durable.
		if serr := u.w.sync(); serr != nil {
			return have, fmt.Errorf("storage: upload %s: %w", u.ID, serr)
		}
		if perr := u.e.persistUpload(u.record()); perr != nil {
			return have, fmt.Errorf("storage: upload %s: %w", u.ID, perr)
		}
	}
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
	u.e.forgetUpload(u.ID)
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
		u.e.forgetUpload(u.ID)
	}
	u.state = uploadCancelled
}

// discard cancels the session and deletes its bytes.
func (u *Upload) discard() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cancelLocked()
}

// release closes the session's blob but keeps it and its record for the
// next start (Close).
func (u *Upload) release() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == uploadActive {
		u.w.release()
		u.state = uploadCancelled
	}
}
