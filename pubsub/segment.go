package pubsub

import (
	"encoding/binary"

	"github.com/pyric/pyric/sandbox/service"
)

// A queue's messages are stored one key per publish call (not per
// message): a publish of several messages writes, for each queue they go
// to, one segment under the key of its first message's sequence,
//
//	2 | n | (seq | len | record)...      (uvarints; record as encodeRecord)
//
// and taking part of a segment out sets bits in its bitmap
//
//	k/<uid>/<first seq:8 bytes BE>  two bits per message of the segment:
//	                                acknowledged (bit 2i), dropped
//	                                (2i+1: expired or dead-lettered)
//
// until every message is out, when both keys go (with
// retainAckedMessages, once every message is dropped: acknowledged ones
// stay, as a one-record value keeps its Acked flag, while dropped ones
// are gone as a one-record value is deleted). A publish of one
// message, and every other writer (Seek, snapshots, import, delivery
// counts), writes plain one-record values (recordV1 or JSON) under the
// message's own sequence: the two forms mix in one queue, read alike by
// forEachQueued. Publish ranges never interleave (a publish takes its
// sequences at once), so keys in order are messages in order.
const segmentV2 = 2

func ackPrefix(uid string) []byte { return []byte("k/" + uid + "/") }
func ackKey(uid string, seg uint64) []byte {
	k := make([]byte, 0, len(uid)+11)
	k = append(append(append(k, "k/"...), uid...), '/')
	return binary.BigEndian.AppendUint64(k, seg)
}

// appendSegment appends a segment of encoded records (with their
// sequences) to b.
func appendSegment(b []byte, seqs []uint64, recs [][]byte) []byte {
	b = append(b, segmentV2)
	b = binary.AppendUvarint(b, uint64(len(recs)))
	for i, r := range recs {
		b = binary.AppendUvarint(b, seqs[i])
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

// segmentLen is the number of messages of a stored segment (0 for a
// one-record value or an unreadable one).
func segmentLen(v []byte) int {
	if len(v) == 0 || v[0] != segmentV2 {
		return 0
	}
	n, k := binary.Uvarint(v[1:])
	if k <= 0 {
		return 0
	}
	return int(n)
}

// queued is one stored message of a queue as forEachQueued reads it.
type queued struct {
	seq uint64
	ref storedRef
	rec record // Acked set from the segment's bitmap too
}

// storedRef locates a message in its queue's keys: seg is the key's
// sequence of a segment (0 when the message has a key of its own) and
// idx its place in the segment.
type storedRef struct {
	seg uint64
	idx int
}

// forEachQueued visits the stored messages of queue uid from sequence
// from on, in sequence order, acknowledged (retained) ones included;
// unreadable records are skipped. fn's record is its own (copied out of
// the transaction); an error of fn stops the walk and is returned.
func forEachQueued(tx service.Tx, uid string, from uint64, fn func(q *queued) error) error {
	prefix := queuePrefix(uid)
	var q queued
	return tx.ForEach(prefix, func(k, v []byte) error {
		key := seqOf(k)
		if len(v) == 0 || v[0] != segmentV2 {
			if key < from {
				return nil
			}
			q = queued{seq: key}
			if decodeRecord(v, &q.rec) != nil {
				return nil
			}
			return fn(&q)
		}
		d := decoder{b: v[1:]}
		n := d.uvarint()
		var bm []byte
		read := false
		for i := 0; i < int(n) && !d.bad; i++ {
			seq := d.uvarint()
			l := d.uvarint()
			if d.bad || l > uint64(len(d.b)) {
				return nil
			}
			body := d.b[:l]
			d.b = d.b[l:]
			if seq < from {
				continue
			}
			q = queued{seq: seq, ref: storedRef{seg: key, idx: i}}
			if decodeRecord(body, &q.rec) != nil {
				continue
			}
			if !read {
				bm, read = tx.Get(ackKey(uid, key)), true
			}
			if bitSet(bm, 2*i+1) { // dropped
				continue
			}
			if bitSet(bm, 2*i) {
				q.rec.Acked = true
			}
			if err := fn(&q); err != nil {
				return err
			}
		}
		return nil
	})
}

func bitSet(bm []byte, i int) bool { return i/8 < len(bm) && bm[i/8]&(1<<(i%8)) != 0 }

// removed is a message leaving its queue's keys.
type removed struct {
	seq  uint64
	ref  storedRef
	msg  *Message // for a retained acknowledgement's record
	drop bool     // dead-lettered or expired, not acknowledged: never kept
}

// removeStored takes messages out of queue uid in tx: acknowledged
// (kept, marked so, when retain) or dropped.
func removeStored(tx service.Tx, uid string, rs []removed, retain bool) error {
	type segAcks struct {
		bm []byte
	}
	var segs map[uint64]*segAcks
	for _, r := range rs {
		if r.ref.seg == 0 {
			k := queueKey(uid, r.seq)
			if retain && !r.drop {
				if err := putRecord(tx, k, &record{Msg: r.msg, Acked: true}); err != nil {
					return err
				}
				continue
			}
			if err := tx.Delete(k); err != nil {
				return err
			}
			continue
		}
		if segs == nil {
			segs = map[uint64]*segAcks{}
		}
		sa := segs[r.ref.seg]
		if sa == nil {
			sa = &segAcks{bm: append([]byte(nil), tx.Get(ackKey(uid, r.ref.seg))...)}
			segs[r.ref.seg] = sa
		}
		bit := 2 * r.ref.idx
		if r.drop {
			bit++
		}
		for len(sa.bm) <= bit/8 {
			sa.bm = append(sa.bm, 0)
		}
		sa.bm[bit/8] |= 1 << (bit % 8)
	}
	for seg, sa := range segs {
		qk := queueKey(uid, seg)
		n := segmentLen(tx.Get(qk))
		// Gone when no message is left, nor kept acknowledged.
		gone := n > 0
		for i := 0; i < n && gone; i++ {
			dropped := bitSet(sa.bm, 2*i+1)
			gone = dropped || bitSet(sa.bm, 2*i) && !retain
		}
		if gone {
			if err := tx.Delete(qk); err != nil {
				return err
			}
			if err := tx.Delete(ackKey(uid, seg)); err != nil {
				return err
			}
			continue
		}
		if n == 0 { // the segment went meanwhile (a reseed)
			continue
		}
		if err := tx.Put(ackKey(uid, seg), sa.bm); err != nil {
			return err
		}
	}
	return nil
}

// deleteQueue deletes every stored message of queue uid.
func deleteQueue(tx service.Tx, uid string) error {
	if err := tx.DeletePrefix(queuePrefix(uid)); err != nil {
		return err
	}
	return tx.DeletePrefix(ackPrefix(uid))
}
