package database_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/pyric/pyric/database"
)

// BenchmarkWindowedQuery100k is a limitToFirst(10) window at a moving
// start over 100,000 children, served from the child index.
func BenchmarkWindowedQuery100k(b *testing.B) {
	d, _ := newDB(b, "", nil)
	m := make(map[string]any, 100000)
	for i := 0; i < 100000; i++ {
		m[fmt.Sprintf("k%06d", i)] = map[string]any{"score": float64((i * 7919) % 100000)}
	}
	if _, err := d.Set(admin, ns, "big", m, database.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	q := database.Query{Index: "score", Limit: 10}
	if _, err := d.Get(admin, ns, "big", &q, false); err != nil { // builds the index
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := database.Query{Index: "score", Start: &database.Bound{Value: float64(i % 100000), Inclusive: true}, Limit: 10}
		r, err := d.Get(admin, ns, "big", &q, false)
		if err != nil || len(r.Value.(map[string]any)) != 10 {
			b.Fatalf("%v %v", r.Value, err)
		}
	}
}

// BenchmarkFanout1000 is one write delivered to 1,000 listening
// connections.
func BenchmarkFanout1000(b *testing.B) {
	d, _ := newDB(b, "", nil)
	conns := make([]*database.Conn, 1000)
	for i := range conns {
		conns[i] = d.Connect(ns, admin)
		if _, err := conns[i].Listen("room", database.Query{}, 0, ""); err != nil {
			b.Fatal(err)
		}
		conns[i].Next(context.Background())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Set(admin, ns, "room/msg", strconv.Itoa(i), database.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		for _, c := range conns {
			if _, err := c.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSet is a small write into a 10,000-child collection.
func BenchmarkSet(b *testing.B) {
	d, _ := newDB(b, "", nil)
	m := make(map[string]any, 10000)
	for i := 0; i < 10000; i++ {
		m[fmt.Sprintf("k%05d", i)] = float64(i)
	}
	d.Set(admin, ns, "c", m, database.WriteOptions{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Set(admin, ns, "c/k"+strconv.Itoa(i%10000), float64(i), database.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
