package storetest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Restart without persistence: counters are lost, yet every key's next
// token is larger than its last one, because tokens take the larger of the
// counter and the server's clock.
func (e *Env) restartTokens(t *testing.T) {
	st := e.open(t)
	const n = 50
	keys := make([]string, n)
	last := make([]uint64, n)
	for i := range keys {
		keys[i] = Key(t, strconv.Itoa(i))
		for range 3 {
			g, err := st.Acquire(Ctx(t), Req(keys[i], 30*time.Second))
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			last[i] = g.Token
			if i%2 == 1 { // half still held at the restart
				break
			}
			if err := st.Release(Ctx(t), g); err != nil {
				t.Fatalf("release: %v", err)
			}
		}
	}
	Restart(t, e.Server)
	if v := e.command(t, e.Server, "DBSIZE"); v != ":0" {
		t.Fatalf("after the restart DBSIZE = %s; want an empty server", v)
	}
	st2 := e.open(t)
	for i, k := range keys {
		g, err := st2.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire after restart: %v", err)
		}
		if g.Token <= last[i] {
			t.Fatalf("key %d: token after restart %d not greater than %d", i, g.Token, last[i])
		}
	}
}

// The counter wins over the clock when it is ahead, so tokens never repeat
// within a microsecond or after the clock steps back while the server runs.
func (e *Env) counterAhead(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	ahead := uint64(time.Now().UnixMicro()) + 1_000_000_000_000 // 11.6 days ahead
	if v := e.command(t, e.Server, "SET", "leasehold:{"+k+"}:token", strconv.FormatUint(ahead, 10)); v != "+OK" {
		t.Fatalf("SET counter: %s", v)
	}
	for i := uint64(1); i <= 3; i++ {
		g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		if g.Token != ahead+i {
			t.Fatalf("token %d, want the counter + 1 = %d", g.Token, ahead+i)
		}
		if err := st.Release(Ctx(t), g); err != nil {
			t.Fatal(err)
		}
	}
}

// A counter holding garbage is an error naming it, never a token of 0 or 1;
// a lease key of the wrong type is an error too.
func (e *Env) garbageCounter(t *testing.T) {
	st := e.open(t)
	for _, v := range []string{"abc", "-5", "1e5", "0x10", " 7", "", "99999999999999999", "9007199254740993"} {
		k := Key(t, "k")
		if r := e.command(t, e.Server, "SET", "leasehold:{"+k+"}:token", v); r != "+OK" {
			t.Fatalf("SET: %s", r)
		}
		g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err == nil {
			t.Fatalf("counter %q: acquire granted token %d", v, g.Token)
		}
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "token counter") || !strings.Contains(err.Error(), e.Server.Addr()) {
			t.Errorf("counter %q: got %v, want a store error naming the counter and the server", v, err)
		}
		if _, err := st.Holder(Ctx(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("counter %q: Holder after the failed acquire: %v, want ErrNotHeld", v, err)
		}
	}
	// A lease key holding a foreign string, or a value of the wrong type.
	k := Key(t, "foreign")
	if r := e.command(t, e.Server, "SET", "leasehold:{"+k+"}:lock", "x"); r != "+OK" {
		t.Fatalf("SET: %s", r)
	}
	if _, err := st.Acquire(Ctx(t), Req(k, 30*time.Second)); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "not a leasehold lease") {
		t.Errorf("lease key holding a foreign value: got %v, want a store error saying so", err)
	}
	if _, err := st.Holder(Ctx(t), k); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "not a leasehold lease") {
		t.Errorf("Holder of a lease key holding a foreign value: got %v, want a store error saying so", err)
	}
	k = Key(t, "wrongtype")
	if r := e.command(t, e.Server, "HSET", "leasehold:{"+k+"}:lock", "f", "v"); r != ":1" {
		t.Fatalf("HSET: %s", r)
	}
	if _, err := st.Acquire(Ctx(t), Req(k, 30*time.Second)); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("lease key of the wrong type: got %v, want a store error with WRONGTYPE", err)
	}
}

// The scripts are called by SHA; after SCRIPT FLUSH (or a restart) the
// store falls back to EVAL, which caches them again.
func (e *Env) noScript(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	if r := e.command(t, e.Server, "SCRIPT", "FLUSH"); r != "+OK" {
		t.Fatalf("SCRIPT FLUSH: %s", r)
	}
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire after SCRIPT FLUSH: %v", err)
	}
	if err := st.Release(Ctx(t), g); err != nil {
		t.Fatalf("release after SCRIPT FLUSH: %v", err)
	}
}
