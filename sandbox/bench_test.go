package sandbox

import (
	"fmt"
	"testing"
)

// BenchmarkDurableWrite measures an acknowledged (fsync'd) admin write.
func BenchmarkDurableWrite(b *testing.B) {
	sb, err := openFS(Options{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	fa := fsOf(sb).Admin()
	i := 0
	for b.Loop() {
		i++
		if err := fa.SetDocument(bg, fmt.Sprintf("c/%d", i%1000), map[string]any{"n": i}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpointApply measures a checkpoint's bbolt transaction:
// 1,000 logged leaf writes of one space (as a second of REST puts leaves
// them), per change; its allocations are the load-independent figure.
func BenchmarkCheckpointApply(b *testing.B) {
	st, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	batch := walBatch{db: logSpace("database", "ns")}
	for i := range 1000 {
		batch.changes = append(batch.changes, walChange{path: fmt.Sprintf("/rest/r%d/n", i), data: []byte("1")})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := st.apply([]walBatch{batch}, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/change")
}

// BenchmarkCheckpointApplyRepeated is BenchmarkCheckpointApply with each
// of 250 keys written four times (a node put, then patched, within a
// second), per change.
func BenchmarkCheckpointApplyRepeated(b *testing.B) {
	st, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var batches []walBatch
	for i := range 1000 {
		batches = append(batches, walBatch{db: logSpace("database", "ns"), changes: []walChange{{path: fmt.Sprintf("/rest/r%d/n", i%250), data: []byte("1")}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := st.apply(batches, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/change")
}
