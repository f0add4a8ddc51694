package rwlock

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/leasehold-go/leasehold/fence"
)

// FuzzGuard feeds a Guard a sequence of sequencers, 9 bytes each (mode,
// then the epoch; a writer's token is its epoch unless the mode byte's top
// bit says otherwise), and checks: it never panics; a refusal is
// fence.ErrStale (naming the refused epoch and a higher one) or
// ErrInvalidSequencer, and changes nothing; an accepted writer sets both
// epochs to its own; an accepted reader is at or above the latest
// writer's epoch and leaves it alone; the writer's epoch never exceeds
// the highest, and neither ever goes down.
func FuzzGuard(f *testing.F) {
	seq := func(ss ...Sequencer) []byte {
		var b []byte
		for _, s := range ss {
			b = append(b, byte(s.Mode))
			b = binary.BigEndian.AppendUint64(b, s.Epoch)
		}
		return b
	}
	f.Add(seq(Sequencer{Write, 3, 3}, Sequencer{Read, 4, 1}, Sequencer{Write, 3, 3}, Sequencer{Read, 2, 9}))
	f.Add(seq(Sequencer{Read, 7, 1}, Sequencer{Read, 5, 1}, Sequencer{Write, 6, 6}, Sequencer{Write, 8, 8}))
	f.Add([]byte{0x82, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var g Guard
		for ; len(data) >= 9; data = data[9:] {
			s := Sequencer{Mode: Mode(data[0] & 0x7f), Epoch: binary.BigEndian.Uint64(data[1:9])}
			s.Token = s.Epoch
			if data[0]&0x80 != 0 {
				s.Token = s.Epoch + 1
			}
			w0, h0 := g.Epochs()
			err := g.Check(s)
			w, h := g.Epochs()
			var se *fence.StaleError
			switch {
			case err != nil && (w != w0 || h != h0):
				t.Fatalf("refused %v (%v) but moved the epochs from (%d, %d) to (%d, %d)", s, err, w0, h0, w, h)
			case errors.As(err, &se):
				if se.Token != s.Epoch || se.Highest <= s.Epoch {
					t.Fatalf("refused %v with %+v: want the epoch and a higher one named", s, se)
				}
			case err != nil && !errors.Is(err, ErrInvalidSequencer):
				t.Fatalf("refused %v with %v", s, err)
			case err == nil && s.Mode == Write && (w != s.Epoch || h != s.Epoch):
				t.Fatalf("accepted writer %v left the epochs at (%d, %d)", s, w, h)
			case err == nil && s.Mode == Read && (s.Epoch < w || w != w0 || h < s.Epoch):
				t.Fatalf("accepted reader %v: epochs (%d, %d) -> (%d, %d)", s, w0, h0, w, h)
			}
			if w > h || w < w0 || h < h0 {
				t.Fatalf("after %v the epochs went from (%d, %d) to (%d, %d)", s, w0, h0, w, h)
			}
		}
	})
}
