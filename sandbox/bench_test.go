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
