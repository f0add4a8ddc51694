package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// shortTTL is the suites' expiry and renewal TTL: 300 ms (the suite's
// default) leaves a renewal 200 ms, which a loaded two-core machine under
// the race detector sometimes misses.
const shortTTL = time.Second

func (e *Env) conformanceOpenURL(t *testing.T) {
	leasetest.Run(t, leasetest.Config{
		ShortTTL: shortTTL,
		Open:     func(t testing.TB) leasehold.Store { return e.open(t) },
		Restart:  func(t testing.TB) { Restart(t, e.Server) },
	})
}

// The store over a client the caller owns: closing the store leaves the
// client open.
func (e *Env) conformanceUserClient(t *testing.T) {
	c := e.NewClient(t, e.Server.Addr())
	warm(t, c)
	leasetest.Run(t, leasetest.Config{
		ShortTTL: shortTTL,
		Open: func(t testing.TB) leasehold.Store {
			s, err := lhredis.New(c, &lhredis.Options{Prefix: "user-client:"})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return s
		},
	})
	s, err := lhredis.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Holder(Ctx(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("the caller's client after the stores closed: %v", err)
	}
}

// warm makes c start the goroutines it starts on first concurrent use
// (rueidis's pipelines), so that the suite's leak check, which ignores the
// goroutines present when it starts, does not count the caller's client.
func warm(t *testing.T, c lhredis.Client) {
	s, err := lhredis.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Holder(Ctx(t), "warm-up")
		}()
	}
	wg.Wait()
}

func (e *Env) info(t *testing.T) {
	info := e.open(t).Info()
	if info.Name != "redis" || !info.SafeTokens || !strings.Contains(info.TokenCaveat, "clock") {
		t.Fatalf("Info = %+v, want SafeTokens with a caveat naming the clock assumption", info)
	}
}

// List finds the held keys under a prefix, and only those: not a key that
// merely shares a prefix of its storage name, not a released one.
func (e *Env) list(t *testing.T) {
	st := e.open(t)
	base := Key(t, "") + "/"
	keys := []string{"a", "a/x", "a*", "a?", "a[1]", "a{b}", "a%7D", "b", "released"}
	gs := map[string]leasehold.Grant{}
	for _, k := range keys {
		g, err := st.Acquire(Ctx(t), Req(base+k, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		gs[k] = g
	}
	if err := st.Release(Ctx(t), gs["released"]); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string][]string{
		"a":        {"a", "a%7D", "a*", "a/x", "a?", "a[1]", "a{b}"},
		"a*":       {"a*"},
		"a[":       {"a[1]"},
		"a{":       {"a{b}"},
		"a%":       {"a%7D"},
		"":         {"a", "a%7D", "a*", "a/x", "a?", "a[1]", "a{b}", "b"},
		"released": nil,
		"zzz":      nil,
	} {
		hs, err := st.List(Ctx(t), base+prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		var got []string
		for _, h := range hs {
			k := strings.TrimPrefix(h.Key, base)
			got = append(got, k)
			if h.Token != gs[k].Token || h.Label != "test" || h.Remaining <= 0 {
				t.Errorf("List(%q): holder %+v, want token %d", prefix, h, gs[k].Token)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
}
