package harness

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/proxy"
)

// The late clean-up fault (F5c) targets a store
// whose acquire, when its reply is lost, clears what it may have taken with
// a clean-up of its own: the holder's proxy drops the reply of an acquire
// that the store granted, and holds back the statements the holder sends
// in the lateWindow after the drop, among them the clean-up (the holder's
// client sees it time out). Meanwhile the holder retries; the harness lets
// the held requests through as soon as a retry of the same holder has won
// the same key again (or after the clean-up's own wait plus lateMaxTx
// TTLs). A clean-up that matched the owner alone would then clear that
// later grant while the holder believes it holds the key, and let another
// holder in: concurrent holders, which this fault must not produce.
//
// From the drop until the held requests reached the store, the other
// holders' proxies hold back their statements that name the lost grant's
// key (LateCleanup.SameKey): the retry is the key's only contender, so the
// episode sequences on that event rather than on winning a race against
// the other holders (on a loaded machine they took the key first, episode
// after episode). They are let through after the clean-up, so a clean-up
// that cleared the retry's grant still lets them in.
const (
	lateWindow = time.Second
	lateMaxTx  = 8 // the longest hold, beyond the clean-up's wait, in TTLs
	lateTries  = 3 // episodes re-run until one bites
)

// lateCleanup runs one F5c episode, again (at most lateTries times in all)
// while it does not bite: the dropped reply must be followed by a retry of
// the same holder that wins the same key before the held requests reach
// the store.
func (h *harness) lateCleanup() error {
	T := h.cfg.TTL
	f, _, _ := h.cfg.Backend.(LateCleanupStore).LateCleanup()
	for try := 1; ; try++ {
		s := h.reader(nil, 10*T+5*time.Second)
		if s == nil {
			return fmt.Errorf("no holder read the counter for %s (see %s)", 10*T+5*time.Second, h.cfg.Dir)
		}
		st, bit := h.lateEpisode(s, f)
		h.sleep(h.ttlx(1.5))
		if bit || try == lateTries || h.ctx.Err() != nil {
			return nil
		}
		h.logf("  F5c did not bite (reply dropped: %v, retry won before the held requests: %v): again", st.Dropped != 0, bit)
	}
}

// lateEpisode is one F5c episode on holder s; bit reports that a retry of
// s won the lost grant's key before the held requests reached the store.
func (h *harness) lateEpisode(s *slot, f LateCleanup) (st proxy.LateStats, bit bool) {
	T := h.cfg.TTL
	limit := f.Wait + lateMaxTx*T
	p := s.proxies[0]
	hist := filepath.Join(h.cfg.Dir, "hist-"+s.id+".jsonl")
	others := h.lateOthers(s, p, f, limit)
	p.LoseReplyDelayRequests(f.Granted, f.Runs, limit, lateWindow)
	h.fault("F5c", s.id, "on", fmt.Sprintf("next granted acquire's reply dropped; statements sent in the next %s held until a retry wins the key (at most %s); the other holders' statements on that key held until then", lateWindow, limit))
	for end := time.Now().Add(10 * T); p.LateStats().Dropped == 0 && time.Now().Before(end) && h.ctx.Err() == nil; {
		h.sleep(T / 20)
	}
	st = p.LateStats()
	if st.Dropped != 0 {
		// Let the held requests through once a retry has won.
		for end := time.Now().Add(limit); time.Now().Before(end) && h.ctx.Err() == nil; h.sleep(T / 20) {
			evs, _ := history.ReadFile(hist)
			if won, _ := check.LateBit(evs, s.id, st.Dropped, history.Mono()); won {
				break
			}
		}
		p.ReleaseDelayed()
		for end := time.Now().Add(2 * T); p.LateStats().Delivered == 0 && time.Now().Before(end) && h.ctx.Err() == nil; {
			h.sleep(T / 50)
		}
		// Only now, behind the clean-up, may the others reach the key.
		for _, o := range others {
			o.ReleaseDelayed()
		}
		st = p.LateStats()
		evs, _ := history.ReadFile(hist)
		var same bool
		bit, same = check.LateBit(evs, s.id, st.Dropped, st.Delivered)
		h.rec.Record(history.Event{T0: st.Dropped, T: max(st.Delivered, st.Dropped), Kind: history.EvMark, Target: s.id,
			Note: fmt.Sprintf("%sreply dropped; %d request chunks held, delivered after %s; a retry won the key before: %v (same owner id: %v)",
				check.LateMark, st.Held, time.Duration(max(st.Delivered-st.Dropped, 0)).Round(time.Millisecond), bit, same)})
		// What a cleared grant would let happen: another holder
		// acquires while this one still believes it holds the key.
		h.sleep(2 * T)
	}
	p.Clear()
	for _, o := range others {
		o.Clear()
	}
	h.fault("F5c", s.id, "off", "")
	return st, bit
}

// lateOthers makes every other holder's proxies hold back, once p has
// dropped the granted reply, the requests that name the lost acquire's
// key (at most limit each, until ReleaseDelayed), and returns them.
func (h *harness) lateOthers(s *slot, p *proxy.Proxy, f LateCleanup, limit time.Duration) []*proxy.Proxy {
	if f.SameKey == nil {
		return nil
	}
	hold := func(b []byte) bool {
		req := p.LateStats().Request
		return req != nil && f.SameKey(req, b)
	}
	var out []*proxy.Proxy
	for _, o := range h.allSlots() {
		if o == s {
			continue
		}
		for _, q := range o.proxies {
			q.HoldRequests(hold, limit)
			out = append(out, q)
		}
	}
	return out
}
