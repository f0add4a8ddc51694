package rwlock

import (
	"errors"
	"testing"

	"github.com/leasehold-go/leasehold/fence"
)

func TestGuardCheck(t *testing.T) {
	r := func(epoch, token uint64) Sequencer { return Sequencer{Mode: Read, Epoch: epoch, Token: token} }
	w := func(epoch uint64) Sequencer { return Sequencer{Mode: Write, Epoch: epoch, Token: epoch} }
	tests := []struct {
		name string
		seen []Sequencer // accepted first
		s    Sequencer
		want error // nil, fence.ErrStale or ErrInvalidSequencer
	}{
		{"first writer", nil, w(3), nil},
		{"first reader", nil, r(3, 9), nil},
		{"writer again", []Sequencer{w(3)}, w(3), nil},
		{"newer writer", []Sequencer{w(3)}, w(5), nil},
		{"stale writer", []Sequencer{w(5)}, w(3), fence.ErrStale},
		{"writer behind a later reader", []Sequencer{w(3), r(4, 1)}, w(3), fence.ErrStale},
		{"reader of the current epoch", []Sequencer{w(3)}, r(4, 1), nil},
		{"stale reader", []Sequencer{w(5)}, r(4, 1), fence.ErrStale},
		{"older reader after a newer reader", []Sequencer{w(3), r(7, 1)}, r(4, 2), nil},
		{"reader after the writer it passed", []Sequencer{w(3), r(4, 1), w(6)}, r(4, 1), fence.ErrStale},
		{"zero mode", nil, Sequencer{Epoch: 1, Token: 1}, ErrInvalidSequencer},
		{"unknown mode", nil, Sequencer{Mode: 9, Epoch: 1, Token: 1}, ErrInvalidSequencer},
		{"zero epoch", nil, r(0, 1), ErrInvalidSequencer},
		{"writer token not its epoch", nil, Sequencer{Mode: Write, Epoch: 2, Token: 3}, ErrInvalidSequencer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &Guard{Resource: "table t"}
			for _, s := range tc.seen {
				if err := g.Check(s); err != nil {
					t.Fatalf("setting up with %v: %v", s, err)
				}
			}
			wb, hb := g.Epochs()
			err := g.Check(tc.s)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Check(%v) = %v, want nil", tc.s, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Check(%v) = %v, want %v", tc.s, err, tc.want)
			}
			if wa, ha := g.Epochs(); wa != wb || ha != hb {
				t.Fatalf("a refused %v moved the epochs from (%d, %d) to (%d, %d)", tc.s, wb, hb, wa, ha)
			}
			var se *fence.StaleError
			if errors.As(err, &se) && (se.Token != tc.s.Epoch || se.Resource == "") {
				t.Fatalf("StaleError %+v does not name the refused epoch %d and the resource", se, tc.s.Epoch)
			}
		})
	}
}
