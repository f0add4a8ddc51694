package fence

import (
	"errors"
	"sync"
	"testing"
)

func TestRegisterSequence(t *testing.T) {
	var r Register[[]byte] // the zero value is ready
	if _, _, ok := r.Read(); ok {
		t.Fatal("empty register reports a value")
	}
	steps := []struct {
		token uint64
		value string
		ok    bool
	}{
		{0, "zero", true}, // any token passes an empty register
		{3, "three", true},
		{3, "three again", true},
		{2, "two", false},
		{10, "ten", true},
		{9, "nine", false},
		{0, "zero again", false},
	}
	for i, s := range steps {
		err := r.Write(s.token, []byte(s.value))
		if s.ok != (err == nil) {
			t.Fatalf("step %d: Write(%d) = %v; want ok=%v", i, s.token, err, s.ok)
		}
		if err != nil {
			var se *StaleError
			if !errors.As(err, &se) || se.Token != s.token || se.Highest == 0 || se.Highest <= s.token {
				t.Fatalf("step %d: error %#v", i, err)
			}
		}
	}
	v, tok, ok := r.Read()
	if !ok || tok != 10 || string(v) != "ten" {
		t.Fatalf("Read = %q, %d, %v", v, tok, ok)
	}
	if a, rj := r.Counts(); a != 4 || rj != 3 {
		t.Fatalf("Counts = %d, %d; want 4, 3", a, rj)
	}
	h := r.History()
	if len(h) != len(steps) {
		t.Fatalf("history has %d entries", len(h))
	}
	for i, s := range steps {
		if h[i].Token != s.token || string(h[i].Value) != s.value || h[i].Accepted != s.ok {
			t.Errorf("history[%d] = %+v", i, h[i])
		}
	}
	h[0].Token = 99 // History returns a copy
	if r.History()[0].Token != 0 {
		t.Fatal("History shares its slice with the register")
	}
}

// TestRegisterConcurrent: writers race with increasing tokens. In the
// history (the register's own order), accepted tokens never decrease and
// every rejected token is below the highest accepted before it.
func TestRegisterConcurrent(t *testing.T) {
	var r Register[int]
	const workers, perWorker = 8, 300
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perWorker; i++ {
				tok := uint64(i*workers + w)
				r.Write(tok, int(tok))
			}
		}()
	}
	wg.Wait()
	var highest uint64
	accepted, rejected := 0, 0
	for i, w := range r.History() {
		if w.Accepted {
			if w.Token < highest {
				t.Fatalf("history[%d]: accepted token %d after %d", i, w.Token, highest)
			}
			highest = w.Token
			accepted++
		} else {
			if w.Token >= highest {
				t.Fatalf("history[%d]: rejected token %d with highest %d", i, w.Token, highest)
			}
			rejected++
		}
	}
	a, rj := r.Counts()
	if a != accepted || rj != rejected || a+rj != workers*perWorker {
		t.Fatalf("Counts = %d, %d; history says %d, %d", a, rj, accepted, rejected)
	}
	if v, tok, _ := r.Read(); tok != highest || v != int(highest) || highest != perWorker*workers+workers-1 {
		t.Fatalf("Read = %d, %d; highest %d", v, tok, highest)
	}
}
