package sandbox

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pyric/pyric/firestore"
)

// The Firestore write-ahead log. An acknowledged Firestore commit batch is
// one record appended to the log with one write (and, with SyncAlways, one
// fdatasync) — not a bbolt transaction, which rebuilds and writes several
// pages and its meta page for each commit. A checkpoint applies the
// records written since the last one to the bbolt file in one transaction,
// syncs it, and deletes their log file; it runs every SyncInterval, when
// the records not yet applied pass walCheckpointBytes, and at Close. At
// open, the logs left by a crash are applied before anything is read.
//
// The log is a sequence of files in the data dir, pyric.wal.<n> with n
// increasing: a checkpoint starts a new file for the records after it, so
// that the old one can be deleted whole once the bbolt file holds its
// records. Records are whole document states, so applying one twice (after
// a crash between a checkpoint's sync and its delete) changes nothing.
//
// A file is walMagic, then records: a 4-byte little-endian payload length,
// the payload's 4-byte CRC-32C, the payload. A payload is the database
// name and its changes: uvarint-length-prefixed name, uvarint count, and
// per change a kind byte (walPut, walDelete), the length-prefixed path and,
// for a put, the length-prefixed document encoding.
const (
	walMagic  = "pyricwal1\n"
	walPrefix = "pyric.wal."

	walDelete byte = 0
	walPut    byte = 1

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
	path string
	data []byte // nil: deleted
}

// walBatch is one logged commit batch of one database.
type walBatch struct {
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

// appendWALRecord appends the framed record of one commit batch to buf.
func appendWALRecord(buf []byte, db string, changes []walChange) []byte {
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0) // length, crc
	buf = binary.AppendUvarint(buf, uint64(len(db)))
	buf = append(buf, db...)
	buf = binary.AppendUvarint(buf, uint64(len(changes)))
	for _, c := range changes {
		kind := walPut
		if c.data == nil {
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
	payload := buf[at+8:]
	binary.LittleEndian.PutUint32(buf[at:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[at+4:], crc32.Checksum(payload, walCRC))
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
		c := walChange{path: string(path)}
		switch kind {
		case walDelete:
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

// readWAL reads log file path. A record cut short at the end of the last
// file (last) is where a power loss (or OS crash) stopped a write that was
// never acknowledged as synced: it is dropped, and torn reports it. Any
// other damage — a bad header, a record whose checksum fails with more of
// the log after it, a malformed payload — is a DamagedStoreError: the file
// is left as it is.
func readWAL(path string, last bool) (batches []walBatch, torn bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("sandbox: open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("sandbox: %s: %w", path, err)
	}
	damaged := func(problem string, args ...any) error {
		return &DamagedStoreError{Path: path, Problem: fmt.Sprintf(problem, args...)}
	}
	r := bufio.NewReaderSize(f, 64<<10)
	head := make([]byte, len(walMagic))
	if n, err := io.ReadFull(r, head); err != nil {
		if last && n == 0 || last && string(head[:n]) == walMagic[:n] {
			return nil, true, nil // created, header not yet written
		}
		return nil, false, damaged("the write-ahead log is shorter than its header")
	}
	if string(head) != walMagic {
		return nil, false, damaged("the write-ahead log does not start with pyric's header")
	}
	off := int64(len(walMagic))
	var frame [8]byte
	for {
		n, err := io.ReadFull(r, frame[:])
		if err == io.EOF {
			return batches, false, nil
		}
		if err != nil {
			if last {
				return batches, true, nil
			}
			return nil, false, damaged("the write-ahead log ends inside a record header at byte %d (%d bytes)", off, n)
		}
		size := binary.LittleEndian.Uint32(frame[:4])
		sum := binary.LittleEndian.Uint32(frame[4:])
		if size > walMaxRecord {
			return nil, false, damaged("the write-ahead log's record at byte %d claims %d bytes, more than any commit", off, size)
		}
		rest := fi.Size() - off - 8
		if int64(size) > rest {
			if last {
				return batches, true, nil
			}
			return nil, false, damaged("the write-ahead log's record at byte %d is %d bytes long, past the file's end", off, size)
		}
		payload := make([]byte, size)
		if _, err := io.ReadFull(r, payload); err != nil {
			return nil, false, fmt.Errorf("sandbox: read %s: %w", path, err)
		}
		if crc32.Checksum(payload, walCRC) != sum {
			if last && int64(size) == rest {
				// The last record, cut short by a power loss after its
				// length reached the disk: never synced, never acked
				// as synced.
				return batches, true, nil
			}
			return nil, false, damaged("the write-ahead log's record at byte %d fails its checksum", off)
		}
		b, err := decodeWALPayload(payload)
		if err != nil {
			return nil, false, damaged("the write-ahead log's record at byte %d cannot be read: %v", off, err)
		}
		if _, err := firestore.ParseDatabaseName(b.db); err != nil {
			return nil, false, damaged("the write-ahead log's record at byte %d names %q, which is not a database name", off, b.db)
		}
		batches = append(batches, b)
		off += 8 + int64(size)
	}
}
