package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The write-ahead log behind every service's service.Log (Firestore's
// first). An acknowledged commit batch (one Append) is one record appended to the log with one write (and, with SyncAlways, one
// fdatasync) — not a bbolt transaction, which rebuilds and writes several
// pages and its meta page for each commit. A checkpoint applies the
// records written since the last one to the bbolt file in one transaction
// and syncs it; it runs every SyncInterval, when the records not yet
// applied pass walCheckpointBytes, and at Close. At open, the logs left by
// a crash are applied before anything is read.
//
// The log is a sequence of files in the data dir, pyric.wal.<n> with n
// increasing by one. The commits append to one file across checkpoints
// until it passes walRotateBytes; then a checkpoint starts a new file for
// the records after it, and deletes the old one whole once the bbolt file
// holds its records. A replay skips the records the bbolt file holds (by
// their sequence); records are whole document states, so applying one
// twice (after a crash between a checkpoint's sync and its delete)
// changes nothing anyway.
//
// Every record carries a sequence number, one more than the record before
// it, across files; each file's header carries the sequence of its first
// record, and the bbolt file keeps the last sequence a checkpoint applied
// (walAppliedKey). So a start can prove that nothing acknowledged is
// missing: the first log must begin at or before the record after the
// checkpoint, and each log where the one before it ends. A file's header
// is written and synced under a temporary name and renamed into place, so
// a pyric.wal.<n> never holds less than a whole header; the last file is
// kept (holding only its header) at Close, so the sequence it starts at
// survives with it.
//
// A torn write — a record cut short or garbled because a power loss or OS
// crash stopped its write — can only be the last record of the last file:
// it was never synced (with SyncAlways, never acknowledged), and the start
// drops it with one line saying so. A bad record anywhere else (with a
// good record after it, or in a file that is not the last), a header cut
// short or garbled, or a gap in the sequence is damage, refused with the
// files left as they are.
//
// A file (format 2) is walMagic, the first record's sequence (8 bytes,
// little endian) and the CRC-32C of both (4 bytes), then records: the
// payload's length (4 bytes), the CRC-32C of the sequence and the payload
// (4 bytes), the sequence (8 bytes), the payload. A payload is the
// database name and its changes: uvarint-length-prefixed name, uvarint
// count, and per change a kind byte (walPut, walDelete), the
// length-prefixed path and, for a put, the length-prefixed document
// encoding; a walDeletePrefix change (a service.LogChange with Prefix)
// deletes every key that begins with its path; a walSpace entry (a path,
// no change) puts the changes after it in the record space it names, so
// that one record holds a commit and the outbox entries of its events,
// atomically. Format 1 (walMagic1, earlier versions: no header sequence, no
// record sequence) is still read, so a data dir a crashed earlier version
// left is replayed; the next log written is of format 2.
const (
	walMagic  = "pyricwal2\n"
	walMagic1 = "pyricwal1\n"
	walPrefix = "pyric.wal."
	// walTemp is where a new log's header is written before the file is
	// renamed to its number.
	walTemp = walPrefix + "tmp"

	walHeaderSize = len(walMagic) + 8 + 4
	walFrameSize  = 16 // length, crc, sequence
	walFrame1Size = 8  // format 1: length, crc

	walDelete       byte = 0
	walPut          byte = 1
	walDeletePrefix byte = 2 // every key beginning with the path
	// walSpace is no change: the changes after it (to the next walSpace)
	// are in the record space its path names instead of the record's
	// own. The sandbox's outbox is written so, in the record of the
	// commit whose events it holds (Outbox).
	walSpace byte = 3

	// walCheckpointBytes starts a checkpoint early when this much is
	// logged but not yet applied, which bounds the memory the pending
	// records take and the length of a replay.
	walCheckpointBytes = 16 << 20
	// walMaxRecord bounds one record: Firestore's request limit (10 MiB)
	// with room for encoding overhead; a longer length is damage.
	walMaxRecord = 64 << 20
)

var walCRC = crc32.MakeTable(crc32.Castagnoli)

// walChange is one logged document state, kept until a checkpoint applies
// it to the bbolt file.
type walChange struct {
	// space is the record space the change is in; "" is the batch's.
	space  string
	path   string
	data   []byte // nil: deleted
	prefix bool   // with data nil: every key beginning with path is deleted
}

// walBatch is one logged commit batch of one database.
type walBatch struct {
	seq     uint64 // 0: read from a format 1 log, which has none
	db      string
	changes []walChange
}

// walFileName is the path of log file n in dir.
func walFileName(dir string, n uint64) string {
	return filepath.Join(dir, walPrefix+fmt.Sprintf("%06d", n))
}

// walFiles lists the log files in dir by number, oldest first.
func walFiles(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: data dir: %w", err)
	}
	var out []uint64
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), walPrefix)
		if !ok || e.IsDir() {
			continue
		}
		n, err := strconv.ParseUint(rest, 10, 64)
		if err != nil {
			continue // not one of ours (pyric.wal.bak, say)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// appendWALHeader appends the header of a log whose first record will
// be sequence first.
func appendWALHeader(buf []byte, first uint64) []byte {
	buf = append(buf, walMagic...)
	buf = binary.LittleEndian.AppendUint64(buf, first)
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[len(buf)-len(walMagic)-8:], walCRC))
}

// appendWALRecord appends the framed record of one commit batch, sequence
// seq, to buf.
func appendWALRecord(buf []byte, seq uint64, db string, changes []walChange) []byte {
	at := len(buf)
	buf = appendWALRecordUnsealed(buf, db, changes)
	sealWALRecord(buf[at:], seq)
	return buf
}

// sealWALRecord sets the sequence of the framed record rec, which
// appendWALRecordUnsealed left unset, and its checksum.
func sealWALRecord(rec []byte, seq uint64) {
	binary.LittleEndian.PutUint64(rec[8:], seq)
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(rec[8:], walCRC))
}

// appendWALRecordUnsealed appends the framed record of one commit batch
// to buf with its length but without its sequence and checksum: the
// group commit numbers a record when it writes it (sealWALRecord).
func appendWALRecordUnsealed(buf []byte, db string, changes []walChange) []byte {
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0) // length, crc
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0) // sequence
	buf = binary.AppendUvarint(buf, uint64(len(db)))
	buf = append(buf, db...)
	entries, cur := len(changes), ""
	for _, c := range changes {
		if c.space != cur {
			entries++
			cur = c.space
		}
	}
	buf = binary.AppendUvarint(buf, uint64(entries))
	cur = ""
	for _, c := range changes {
		if c.space != cur {
			buf = append(buf, walSpace)
			buf = binary.AppendUvarint(buf, uint64(len(c.space)))
			buf = append(buf, c.space...)
			cur = c.space
		}
		kind := walPut
		switch {
		case c.prefix:
			kind = walDeletePrefix
		case c.data == nil:
			kind = walDelete
		}
		buf = append(buf, kind)
		buf = binary.AppendUvarint(buf, uint64(len(c.path)))
		buf = append(buf, c.path...)
		if kind == walPut {
			buf = binary.AppendUvarint(buf, uint64(len(c.data)))
			buf = append(buf, c.data...)
		}
	}
	binary.LittleEndian.PutUint32(buf[at:], uint32(len(buf)-at-walFrameSize))
	return buf
}

// decodeWALPayload parses one record's payload.
func decodeWALPayload(p []byte) (walBatch, error) {
	var b walBatch
	bad := errors.New("malformed record")
	str := func() ([]byte, error) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, bad
		}
		s := p[k : k+int(n)]
		p = p[k+int(n):]
		return s, nil
	}
	db, err := str()
	if err != nil {
		return b, err
	}
	b.db = string(db)
	count, k := binary.Uvarint(p)
	if k <= 0 || count > uint64(len(p)) {
		return b, bad
	}
	p = p[k:]
	b.changes = make([]walChange, 0, count)
	space := ""
	for range count {
		if len(p) == 0 {
			return b, bad
		}
		kind := p[0]
		p = p[1:]
		path, err := str()
		if err != nil {
			return b, err
		}
		if kind == walSpace {
			if space = string(path); space != "" && !validLogSpace(space) {
				return b, fmt.Errorf("a change names %q, which is not a log space", space)
			}
			continue
		}
		c := walChange{space: space, path: string(path)}
		switch kind {
		case walDelete:
		case walDeletePrefix:
			c.prefix = true
		case walPut:
			data, err := str()
			if err != nil {
				return b, err
			}
			c.data = slices.Clip(data)
			if c.data == nil {
				c.data = []byte{}
			}
		default:
			return b, fmt.Errorf("unknown change kind %d", kind)
		}
		b.changes = append(b.changes, c)
	}
	if len(p) != 0 {
		return b, bad
	}
	return b, nil
}

// validLogSpace is a record's space as logSpace writes it: a non-empty
// space, after a service's name and a NUL when it has one.
func validLogSpace(rec string) bool {
	svc, space := splitLogSpace(rec)
	return svc != "" && space != "" && utf8.ValidString(rec) && !strings.ContainsRune(space, 0)
}

// walLog is what readWAL read from one log file.
type walLog struct {
	path    string
	format  int    // 1 or 2
	first   uint64 // format 2: the sequence its header names
	batches []walBatch
	// tornAt and tornBytes locate a torn last record that was dropped
	// (tornBytes 0: none).
	tornAt, tornBytes int64
}

// end is the sequence of the file's last record (first-1 when it has
// none); format 2 only.
func (l *walLog) end() uint64 { return l.first + uint64(len(l.batches)) - 1 }

// readWAL reads log file path; last says it is the newest log, the only
// one a torn write can end. It returns a DamagedStoreError for damage,
// with the file left as it is.
func readWAL(path string, last bool) (*walLog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sandbox: read %s: %w", path, err)
	}
	l := &walLog{path: path}
	damaged := func(problem string, args ...any) error {
		return &DamagedStoreError{Path: path, Problem: fmt.Sprintf(problem, args...), Advice: walAdvice(path)}
	}
	prefixOf := func(m string) bool {
		n := min(len(data), len(m))
		return string(data[:n]) == m[:n]
	}
	switch {
	case len(data) >= len(walMagic1) && string(data[:len(walMagic1)]) == walMagic1:
		l.format = 1
		return l, readWAL1(l, data, last, damaged)
	case len(data) < walHeaderSize && (prefixOf(walMagic) || prefixOf(walMagic1)):
		// A log is renamed into place only once its whole header is
		// synced, so this is a cut, not a file still being created.
		return nil, damaged("it is %d bytes long, shorter than its %d-byte header, so it was cut short", len(data), walHeaderSize)
	case len(data) < walHeaderSize || !prefixOf(walMagic):
		return nil, damaged("it does not start with pyric's write-ahead log header")
	case binary.LittleEndian.Uint32(data[len(walMagic)+8:]) != crc32.Checksum(data[:len(walMagic)+8], walCRC):
		return nil, damaged("its header fails its checksum")
	}
	l.format = 2
	l.first = binary.LittleEndian.Uint64(data[len(walMagic):])
	off := walHeaderSize
	for off < len(data) {
		want := l.first + uint64(len(l.batches))
		b, size, problem := walRecordAt(data, off, want)
		if problem == "" {
			l.batches = append(l.batches, b)
			off += walFrameSize + size
			continue
		}
		if size >= 0 {
			// The record is whole and passes its checksum, so no torn
			// write made it: its content is wrong.
			return nil, damaged("the record at byte %d %s", off, problem)
		}
		if at, seq := walNextGood(data, off, want); at >= 0 {
			return nil, damaged("the record at byte %d (sequence %d) %s, and a good record (sequence %d) follows it at byte %d, so it is not a write cut short by a crash", off, want, problem, seq, at)
		}
		if !last {
			return nil, damaged("the record at byte %d (sequence %d) %s, in a log that is not the last, which a crash cannot leave", off, want, problem)
		}
		l.tornAt, l.tornBytes = int64(off), int64(len(data)-off)
		break
	}
	return l, nil
}

// walRecordAt reads the record at off of a format 2 log, which should be
// sequence want. size is its payload's length when the record is whole
// and passes its checksum (problem then says what else is wrong, if
// anything), -1 when it does not (cut short or garbled).
func walRecordAt(data []byte, off int, want uint64) (walBatch, int, string) {
	rest := len(data) - off
	if rest < walFrameSize {
		return walBatch{}, -1, fmt.Sprintf("is cut off inside its %d-byte frame", walFrameSize)
	}
	le := binary.LittleEndian
	size := int64(le.Uint32(data[off:]))
	if size > walMaxRecord {
		return walBatch{}, -1, fmt.Sprintf("claims %d bytes, more than any commit", size)
	}
	if size > int64(rest-walFrameSize) {
		return walBatch{}, -1, fmt.Sprintf("claims %d bytes, past the file's end (%d bytes left)", size, rest-walFrameSize)
	}
	body := data[off+8 : off+walFrameSize+int(size)]
	if crc32.Checksum(body, walCRC) != le.Uint32(data[off+4:]) {
		return walBatch{}, -1, "fails its checksum"
	}
	seq := le.Uint64(body)
	if seq != want {
		return walBatch{}, int(size), fmt.Sprintf("carries sequence %d where %d belongs", seq, want)
	}
	b, err := decodeWALPayload(body[8:])
	if err != nil {
		return walBatch{}, int(size), fmt.Sprintf("(sequence %d) cannot be read: %v", seq, err)
	}
	if !validLogSpace(b.db) {
		return walBatch{}, int(size), fmt.Sprintf("(sequence %d) names %q, which is not a log space", seq, b.db)
	}
	b.seq = seq
	return b, int(size), ""
}

// walNextGood looks past a bad record at off for a whole record with a
// later sequence than want, which proves the bad one is not a torn last
// write. The sequence field is checked first, so the scan costs a few
// comparisons per byte and a checksum only where a plausible sequence is.
func walNextGood(data []byte, off int, want uint64) (int, uint64) {
	limit := want + uint64(len(data)-off)/walFrameSize + 1
	for p := off + 1; p+walFrameSize <= len(data); p++ {
		seq := binary.LittleEndian.Uint64(data[p+8:])
		if seq <= want || seq > limit {
			continue
		}
		size := int64(binary.LittleEndian.Uint32(data[p:]))
		if size > int64(len(data)-p-walFrameSize) {
			continue
		}
		if crc32.Checksum(data[p+8:p+walFrameSize+int(size)], walCRC) == binary.LittleEndian.Uint32(data[p+4:]) {
			return p, seq
		}
	}
	return -1, 0
}

// readWAL1 reads the records of a format 1 log (earlier versions). It
// has no sequences, so only a record cut short at the file's end of the
// last log is taken for a torn write.
func readWAL1(l *walLog, data []byte, last bool, damaged func(string, ...any) error) error {
	off := len(walMagic1)
	for off < len(data) {
		rest := int64(len(data) - off)
		if rest < walFrame1Size {
			if last {
				l.tornAt, l.tornBytes = int64(off), rest
				return nil
			}
			return damaged("the write-ahead log ends inside a record header at byte %d (%d bytes)", off, rest)
		}
		size := int64(binary.LittleEndian.Uint32(data[off:]))
		sum := binary.LittleEndian.Uint32(data[off+4:])
		if size > walMaxRecord {
			return damaged("the write-ahead log's record at byte %d claims %d bytes, more than any commit", off, size)
		}
		if size > rest-walFrame1Size {
			if last {
				l.tornAt, l.tornBytes = int64(off), rest
				return nil
			}
			return damaged("the write-ahead log's record at byte %d is %d bytes long, past the file's end", off, size)
		}
		payload := data[off+walFrame1Size : off+walFrame1Size+int(size)]
		if crc32.Checksum(payload, walCRC) != sum {
			if last && size == rest-walFrame1Size {
				l.tornAt, l.tornBytes = int64(off), rest
				return nil
			}
			return damaged("the write-ahead log's record at byte %d fails its checksum", off)
		}
		b, err := decodeWALPayload(payload)
		if err != nil {
			return damaged("the write-ahead log's record at byte %d cannot be read: %v", off, err)
		}
		if !validLogSpace(b.db) {
			return damaged("the write-ahead log's record at byte %d names %q, which is not a log space", off, b.db)
		}
		l.batches = append(l.batches, b)
		off += walFrame1Size + int(size)
	}
	return nil
}

// walAdvice is what to do about a damaged log: the writes it holds are
// not in the bbolt file.
func walAdvice(path string) string {
	return fmt.Sprintf("Restore the data dir from a backup, or move it aside (mv %s %s.damaged), with any later %s*, "+
		"to start from the last checkpoint in pyric.db, losing the writes they hold.", path, path, walPrefix)
}
