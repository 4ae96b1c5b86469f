package storage

import (
	"math"
	"strconv"
	"testing"
)

// TestETagIsGenerationAndMetageneration: the ETag, built in one buffer,
// is the generation in base 36, a slash and the metageneration, for the
// extremes of both too.
func TestETagIsGenerationAndMetageneration(t *testing.T) {
	t.Parallel()
	for _, g := range []int64{0, 1, 1796119200002000, math.MaxInt64, math.MinInt64} {
		for _, m := range []int64{0, 1, 42, math.MaxInt64, math.MinInt64} {
			o := &Object{Generation: g, Metageneration: m}
			if got, want := o.ETag(), strconv.FormatInt(g, 36)+"/"+strconv.FormatInt(m, 10); got != want {
				t.Errorf("ETag of %d/%d: %q, want %q", g, m, got, want)
			}
		}
	}
}
