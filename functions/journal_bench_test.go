package functions

import (
	"strconv"
	"testing"

	"github.com/pyric/pyric/functions/trigger"
	"github.com/pyric/pyric/sandbox"
)

// BenchmarkDeliveryJournal is what the journal adds to one trigger
// delivery on a durable store in each sync mode: the change's record
// before it is made and its settlement after (a 1 KiB payload).
func BenchmarkDeliveryJournal(b *testing.B) {
	payload := make([]byte, 0, 1024)
	payload = append(payload, `{"data":"`...)
	for len(payload) < 1020 {
		payload = append(payload, 'x')
	}
	payload = append(payload, `"}`...)
	for _, mode := range []sandbox.SyncMode{sandbox.SyncBatch, sandbox.SyncAlways} {
		b.Run(string(mode), func(b *testing.B) {
			st, err := sandbox.OpenStoreSync(b.TempDir(), mode)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			j := deliveryJournal{log: st.Log(Name), logf: b.Logf}
			b.ResetTimer()
			for i := range b.N {
				key := trigger.Pending{Key: strconv.Itoa(i), Function: "f", Payload: payload}
				if err := j.Pending([]trigger.Pending{key}, nil); err != nil {
					b.Fatal(err)
				}
				j.Settled(key.Key)
			}
		})
	}
}
