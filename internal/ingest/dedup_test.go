package ingest

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestKeyStructuresAgreeWithAMap checks the open-addressing table and the
// sorted form against a Go map on random keys, zero included, at sizes that
// exercise growth and every prefix width.
func TestKeyStructuresAgreeWithAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 15, 16, 17, 1000, 70_000} {
		want := map[uint64]bool{}
		tab := newKeyTable()
		for i := 0; i < n; i++ {
			k := r.Uint64()
			if i == 0 {
				k = 0
			}
			if tab.add(k) == want[k] {
				t.Fatalf("n=%d: add(%d) disagreed with the map on whether it was new", n, k)
			}
			want[k] = true
		}
		if tab.add(0) != !want[0] {
			t.Fatalf("n=%d: second add of 0", n)
		}
		sorted := newSortedKeys(tab.keys())
		for k := range want {
			if !tab.has(k) || !sorted.has(k) {
				t.Fatalf("n=%d: key %d lost (table %v, sorted %v)", n, k, tab.has(k), sorted.has(k))
			}
		}
		for i := 0; i < 10_000; i++ {
			k := r.Uint64()
			if want[k] {
				continue
			}
			if tab.has(k) || sorted.has(k) {
				t.Fatalf("n=%d: key %d found but never added", n, k)
			}
		}
	}
}

// TestSealedGenerationsAnswerTheSame fills several generations, waits until
// the full ones are sorted, and checks every key is still found.
func TestSealedGenerationsAnswerTheSame(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDedupSet(24*time.Hour, 40_000, t0)
	r := rand.New(rand.NewPCG(3, 4))
	var keys []uint64
	for i := 0; i < 35_000; i++ {
		k := r.Uint64()
		keys = append(keys, k)
		d.add(k, t0)
	}
	if len(d.gens) < 3 {
		t.Fatalf("%d generations, want several", len(d.gens))
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, g := range d.gens[:len(d.gens)-1] {
		for g.sorted.Load() == nil {
			if time.Now().After(deadline) {
				t.Fatal("a full generation was never sorted")
			}
			time.Sleep(time.Millisecond)
		}
	}
	for _, k := range keys {
		if !d.has(k, t0) {
			t.Fatalf("key %d forgotten after sealing", k)
		}
	}
	for _, g := range d.gens[:len(d.gens)-1] {
		if g.table != nil {
			t.Error("a sorted generation kept its table")
		}
	}
}
