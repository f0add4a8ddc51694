package semaphore

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
)

// FuzzSlotKeys checks the slot keys of any key and N: either every slot
// key is a valid, distinct key under KEY/slot/, or the refusal is
// ErrInvalidKey and the key or its longest slot key is at fault.
func FuzzSlotKeys(f *testing.F) {
	f.Add("jobs", uint16(3))
	f.Add("", uint16(1))
	f.Add(strings.Repeat("k", leasehold.MaxKeyLen-7), uint16(0))
	f.Add(strings.Repeat("k", leasehold.MaxKeyLen-7), uint16(10))
	f.Add("a\x00b", uint16(2))
	f.Add("\xff", uint16(2))
	f.Fuzz(func(t *testing.T, key string, m uint16) {
		n := 1 + int(m)%MaxSlots
		keys, err := slotKeys(key, n)
		if err != nil {
			if !errors.Is(err, leasehold.ErrInvalidKey) {
				t.Fatalf("slotKeys(%q, %d): %v, not ErrInvalidKey", key, n, err)
			}
			if leasehold.ValidateKey(key) == nil && len(SlotKey(key, n-1)) <= leasehold.MaxKeyLen {
				t.Fatalf("slotKeys(%q, %d) refused a valid key whose slot keys fit: %v", key, n, err)
			}
			return
		}
		if len(keys) != n {
			t.Fatalf("slotKeys(%q, %d): %d keys", key, n, len(keys))
		}
		seen := map[string]bool{}
		for i, k := range keys {
			if err := leasehold.ValidateKey(k); err != nil {
				t.Fatalf("slot %d of %q: %v", i, key, err)
			}
			if seen[k] || !strings.HasPrefix(k, key+slotInfix) || k != SlotKey(key, i) {
				t.Fatalf("slot %d of %q: key %q repeated or not under %q", i, key, k, key+slotInfix)
			}
			seen[k] = true
		}
	})
}
