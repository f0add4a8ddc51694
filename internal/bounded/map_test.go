package bounded

import (
	"fmt"
	"testing"
)

func TestMap(t *testing.T) {
	for _, max := range []int{0, 1, 2, 7, 64} {
		t.Run(fmt.Sprint("max ", max), func(t *testing.T) {
			b := Map[int]{Max: max}
			limit := max
			if limit <= 0 {
				limit = DefaultMax
			}
			if _, ok := b.Get("a"); ok {
				t.Fatal("Get found a name in an empty map")
			}
			b.Put("a", 1)
			if v, ok := b.Get("a"); !ok || v != 1 {
				t.Fatalf("Get = %d, %v; want 1, true", v, ok)
			}
			if v, ok := b.Take("a"); !ok || v != 1 {
				t.Fatalf("Take = %d, %v; want 1, true", v, ok)
			}
			if _, ok := b.Take("a"); ok {
				t.Fatal("took a value twice")
			}
			b.Put("d", 4)
			b.Delete("d")
			if _, ok := b.Get("d"); ok {
				t.Fatal("Get found a deleted name")
			}
			for i := range 3*limit + 1 {
				b.Put(fmt.Sprint(i), i)
				if n := b.Len(); n > limit {
					t.Fatalf("%d remembered, more than %d", n, limit)
				}
				if v, ok := b.Get(fmt.Sprint(i)); !ok || v != i {
					t.Fatalf("the name put last was forgotten: %d, %v", v, ok)
				}
			}
			if limit > 1 && b.Len() < limit/2 {
				t.Fatalf("%d remembered after a full map forgot; want at least %d", b.Len(), limit/2)
			}
			// A name already remembered is updated, never a cause to forget.
			n := b.Len()
			b.Put(fmt.Sprint(3*limit), -1)
			if b.Len() != n {
				t.Fatalf("updating a name changed the count from %d to %d", n, b.Len())
			}
		})
	}
}
