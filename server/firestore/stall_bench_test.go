package firestoreserver

import (
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/firestore"
)

// hasAllRules make every create of /big evaluate hasAll over the
// document's list; /own is what a second user reads meanwhile.
const hasAllRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /big/{id} {
      allow create: if request.auth != null && request.resource.data.list.hasAll([1, 2, 3]);
    }
    match /own/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}`

// BenchmarkReadDuringHasAllWrites measures a light read (one small
// document) while another user creates documents carrying a
// 100,000-element list under a rule calling hasAll on it: p99 of the
// reads with the writes running, against p99 quiet (ratio-p99). A commit
// works its writes and rules out under the store's read lock, so reads
// no longer wait for the evaluation (issue 34: the ratio was ≈450).
func BenchmarkReadDuringHasAllWrites(b *testing.B) {
	s := New(Options{Engine: firestore.New(firestore.Options{}), DefaultProject: "p"})
	if _, err := s.Rules().Set("firestore.rules", hasAllRules); err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	ts := httptest.NewServer(h)
	defer ts.Close()
	docs := "/v1/projects/p/databases/(default)/documents"
	u1, u2 := benchToken("u1"), benchToken("u2")
	if r := do(b, ts, "PATCH", docs+"/own/u2", `{"fields": {"v": {"integerValue": "1"}}}`, u2); r.status != 200 {
		b.Fatalf("seed: %d %s", r.status, r.body)
	}
	vals := make([]string, 100000)
	for i := range vals {
		vals[i] = fmt.Sprintf(`{"integerValue": "%d"}`, i)
	}
	big := `{"fields": {"list": {"arrayValue": {"values": [` + strings.Join(vals, ",") + `]}}}}`
	reads := func(n int) []time.Duration {
		out := make([]time.Duration, 0, n)
		for range n {
			start := time.Now()
			if r := do(b, ts, "GET", docs+"/own/u2", "", u2); r.status != 200 {
				b.Fatalf("read: %d", r.status)
			}
			out = append(out, time.Since(start))
			time.Sleep(time.Millisecond) // pacing: a read a millisecond is the load measured
		}
		slices.Sort(out)
		return out
	}
	p99 := func(d []time.Duration) time.Duration { return d[len(d)*99/100] }
	b.ResetTimer()
	for range b.N {
		quiet := reads(300)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if r := do(b, ts, "POST", docs+"/big", big, u1); r.status != 200 {
					b.Errorf("write: %d %.200s", r.status, r.body)
					return
				}
			}
		})
		loaded := reads(600)
		close(stop)
		wg.Wait()
		b.ReportMetric(float64(p99(quiet).Microseconds()), "quiet-p99-µs")
		b.ReportMetric(float64(p99(loaded).Microseconds()), "loaded-p99-µs")
		b.ReportMetric(float64(loaded[len(loaded)-1].Microseconds()), "loaded-max-µs")
		b.ReportMetric(float64(p99(loaded))/float64(p99(quiet)), "ratio-p99")
	}
}

// benchToken is an unsigned ID token for uid, as the emulator SDKs send.
func benchToken(uid string) string {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	return "Bearer " + enc(`{"alg":"none","type":"JWT"}`) + "." + enc(fmt.Sprintf(`{"sub":%q,"user_id":%q}`, uid, uid)) + "."
}
