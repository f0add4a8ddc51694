package harness

import (
	"slices"
	"testing"
)

func TestPinnedEndpoints(t *testing.T) {
	eps := []string{"a:1", "b:2", "c:3"}
	for _, c := range []struct {
		slot int
		eps  []string
		want []string
	}{
		{0, eps, eps},
		{1, eps, []string{"a:1"}},
		{2, eps, []string{"b:2"}},
		{3, eps, []string{"c:3"}},
		{4, eps, []string{"a:1"}},
		{2, nil, nil},
		{5, eps[:1], []string{"a:1"}},
	} {
		if got := pinnedEndpoints(c.slot, c.eps); !slices.Equal(got, c.want) {
			t.Errorf("pinnedEndpoints(%d, %v) = %v, want %v", c.slot, c.eps, got, c.want)
		}
	}
}
