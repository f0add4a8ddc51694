package faults

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Params are what the checkers need to know about a run besides its history.
type Params struct {
	TTL    time.Duration
	Rho    float64       // the holders' Options.Rho (0: leasehold.DefaultRho)
	Margin time.Duration // the holders' Options.Margin (0: leasehold.DefaultMargin)
	// QuietFrom is when the last fault had healed and settled: every key
	// must make progress (an admitted fenced write) between QuietFrom and
	// End, or it counts as stuck.
	QuietFrom, End int64
	// Final is the harness's own acquire of each key after every holder
	// was killed: a key it could not acquire within the bound is stuck.
	Final map[string]error
}

// Metrics are the checkers' findings for one run. Counts with a target of 0
// are violations; the others are the denominators and the evidence that the
// faults bit.
type Metrics struct {
	// W3: every grant the store made (seen at the store level by a holder,
	// or by the harness's final probe).
	Grants         int
	TokenBackwards int // a grant whose token is not above one returned before it was asked for
	TokenRepeats   int // two different grants of one key with the same token

	// W2: the fenced register.
	FencedWrites  int    // writes that reached the fence
	StaleAccepted int    // admitted with a token below the highest admitted, or equal to it from another grant
	Saves         int    // refused as stale: the fence at work
	FalseRefusals int    // refused although the token was not stale (a resource bug)
	Linearizable  string // porcupine's verdict on the holders' view: Ok, Illegal or Unknown

	// Protected operations (W4).
	Ops              int
	OpsAfterLoss     int // issued after the holder's own loss signal for the grant
	OpsAfterDeadline int // issued after the holder-side deadline (holders with a true clock)
	Losses           int // loss signals

	// Concurrent holders: a grant accepted by one holder while another
	// holder's lease on the key was still within its holder-side deadline
	// (computed from the true clock) and not released. The lease itself
	// failed to exclude; only the fence can save the resource then.
	DoubleGrants  int
	DoubleByFault map[string]int // the fault episode each one fell in (or "none")
	SpuriousF1    int            // losses of a holder paused for less than the renew margin (F1)

	// W1: the unfenced counter, the negative control.
	CounterWrites int
	LostUpdates   int
	Overlaps      int // read-modify-writes overlapped by another grant's on the same key

	// W5: liveness.
	Takeovers []float64 // time from a holder kill to the store's next grant to another holder, / TTL
	// TakeoversStalled are the takeovers during which the harness itself
	// was starved for more than a tenth of the TTL (EvStall): the machine
	// froze, not the store. They are reported, not held against the bound.
	TakeoversStalled []float64
	Stalls           int       // machine-wide stalls seen (EvStall)
	TakeoversClient  []float64 // the same, to the next lease a client accepted
	LateGrants       int       // grants a client refused because they arrived after its deadline
	Stuck            []string  // keys without progress after the faults healed

	// Fault accounting.
	Episodes     map[string]int // fault class -> episodes injected
	PauseSaves   int            // stale writes refused during or just after F2 pauses
	BittenPauses int            // F2 episodes with at least one stale write attempted
	// LateCleanups are the F5c episodes where a retry of the holder whose
	// acquire reply was dropped won the key before its delayed requests
	// (the clean-up) reached the store; LateCleanupsSameOwner, those where
	// the retry used the lost acquire's owner id.
	LateCleanups          int
	LateCleanupsSameOwner int

	Violations []string // details of the first violations found, for the report
}

func (m *Metrics) violate(format string, a ...any) {
	if len(m.Violations) < 20 {
		m.Violations = append(m.Violations, fmt.Sprintf(format, a...))
	}
}

// Check runs every checker over a run's merged history.
func Check(evs []Event, p Params) *Metrics {
	evs = append([]Event(nil), evs...)
	SortHistory(evs)
	m := &Metrics{Episodes: map[string]int{}, DoubleByFault: map[string]int{}}
	checkTokens(evs, m)
	checkFence(evs, m)
	m.Linearizable = CheckRegisterLinearizable(evs, p.End)
	if m.Linearizable == "Illegal" {
		m.violate("porcupine: the fenced register's history is not linearizable against a register that admits only tokens >= the highest")
	}
	checkOps(evs, p, m)
	checkExclusion(evs, p, m)
	checkCounter(evs, m)
	checkFaults(evs, p, m)
	checkStuck(evs, p, m)
	return m
}

type grant struct {
	key, owner string
	token      uint64
	call, ret  int64
}

// checkTokens is W3. Tokens must be unique per key, and strictly increasing
// in real-time order: a grant whose acquire was called after another grant
// of the key had been returned must carry a greater token. Since tokens
// must be unique, the only order they can linearize in is token order, so
// this pairwise check is exact.
func checkTokens(evs []Event, m *Metrics) {
	byKey := map[string][]grant{}
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Kind != EvStoreAcquire || e.Err != "" || e.Token == 0 {
			continue
		}
		id := e.Key + "\x00" + e.Owner + "\x00" + strconv.FormatUint(e.Token, 10)
		if seen[id] {
			continue // the same grant returned twice to its owner (a retried acquire)
		}
		seen[id] = true
		byKey[e.Key] = append(byKey[e.Key], grant{key: e.Key, owner: e.Owner, token: e.Token, call: e.T0, ret: e.T})
	}
	for key, gs := range byKey {
		m.Grants += len(gs)
		owners := map[uint64]string{}
		for _, g := range gs {
			if o, ok := owners[g.token]; ok && o != g.owner {
				m.TokenRepeats++
				m.violate("token %d of key %s granted to two owners", g.token, key)
			}
			owners[g.token] = g.owner
		}
		byRet := append([]grant(nil), gs...)
		sort.Slice(byRet, func(i, j int) bool { return byRet[i].ret < byRet[j].ret })
		byCall := append([]grant(nil), gs...)
		sort.Slice(byCall, func(i, j int) bool { return byCall[i].call < byCall[j].call })
		var maxTok uint64
		var maxG grant
		i := 0
		for _, g := range byCall {
			for i < len(byRet) && byRet[i].ret < g.call {
				if byRet[i].token > maxTok {
					maxTok, maxG = byRet[i].token, byRet[i]
				}
				i++
			}
			if maxTok != 0 && g.token <= maxTok && !(g.token == maxTok && g.owner == maxG.owner) {
				if g.token < maxTok {
					m.TokenBackwards++
					m.violate("token of key %s went backwards: %d granted after %d had been returned", key, g.token, maxTok)
				}
			}
		}
	}
}

// checkFence is W2's exact check: a scan of the resource's admissions in
// the order it made them (it records each decision in the same critical
// section as the decision).
func checkFence(evs []Event, m *Metrics) {
	type state struct {
		hi    uint64
		owner string
	}
	st := map[string]*state{}
	for _, e := range evs {
		if e.Kind != EvAdmit && e.Kind != EvFenced {
			continue
		}
		s := st[e.Key]
		if s == nil {
			s = &state{}
			st[e.Key] = s
		}
		m.FencedWrites++
		stale := e.Token < s.hi || (e.Token == s.hi && s.hi != 0 && e.Owner != s.owner)
		switch e.Kind {
		case EvAdmit:
			if stale {
				m.StaleAccepted++
				m.violate("stale write admitted on %s: token %d (owner %.8s) after token %d (owner %.8s)", e.Key, e.Token, e.Owner, s.hi, s.owner)
			}
			if e.Token > s.hi {
				s.hi, s.owner = e.Token, e.Owner
			}
		case EvFenced:
			if stale {
				m.Saves++
			} else {
				m.FalseRefusals++
				m.violate("write with token %d on %s refused although the highest was %d", e.Token, e.Key, s.hi)
			}
		}
	}
}

type grantID struct {
	key, owner string
	token      uint64
}

// checkOps finds protected operations issued after the holder's own loss
// signal, or after its holder-side deadline as computed from its
// successful store calls (for holders whose clock runs true).
func checkOps(evs []Event, p Params, m *Metrics) {
	rho, margin := p.Rho, p.Margin
	if rho == 0 {
		rho = 0.01
	}
	if margin == 0 {
		margin = 5 * time.Millisecond
	}
	holdFor := int64(float64(p.TTL)*(1-rho)) - int64(margin)
	skewed := map[string]bool{}
	lost := map[grantID]int64{}
	type call struct{ t0, t int64 }
	ok := map[grantID][]call{}
	for _, e := range evs {
		g := grantID{e.Key, e.Owner, e.Token}
		switch e.Kind {
		case EvStart:
			if !strings.Contains(e.Note, "rate=1 ") && !strings.HasSuffix(e.Note, "rate=1") {
				skewed[e.Src] = true
			}
		case EvAcqFail:
			if strings.Contains(e.Err, "arrived after the holder's deadline") {
				m.LateGrants++
			}
		case EvLost:
			m.Losses++
			if _, dup := lost[g]; !dup {
				lost[g] = e.T
			}
		case EvStoreAcquire, EvStoreRenew:
			if e.Err == "" && e.Token != 0 {
				ok[g] = append(ok[g], call{e.T0, e.T})
			}
		}
	}
	for _, e := range evs {
		if e.Kind != EvOp {
			continue
		}
		m.Ops++
		g := grantID{e.Key, e.Owner, e.Token}
		if t, ok := lost[g]; ok && e.T0 > t {
			m.OpsAfterLoss++
			m.violate("%s issued an operation on %s (token %d) %s after its own loss signal", e.Src, e.Key, e.Token, time.Duration(e.T0-t))
		}
		if skewed[e.Src] {
			continue
		}
		var deadline int64
		for _, c := range ok[g] {
			if c.t <= e.T0 && c.t0+holdFor > deadline {
				deadline = c.t0 + holdFor
			}
		}
		if deadline != 0 && e.T0 > deadline {
			m.OpsAfterDeadline++
			m.violate("%s issued an operation on %s (token %d) %s after its holder-side deadline", e.Src, e.Key, e.Token, time.Duration(e.T0-deadline))
		}
	}
}

// checkCounter is W1: lost updates (acknowledged increments the final value
// does not contain) and overlapping read-modify-writes by different grants.
func checkCounter(evs []Event, m *Metrics) {
	type span struct {
		owner      string
		start, end int64
	}
	reads := map[string]Event{} // by request id
	spans := map[string][]span{}
	writes := map[string]int{}
	final := map[string]int64{}
	for _, e := range evs {
		switch e.Kind {
		case EvRead:
			reads[e.Req] = e
		case EvCWrite:
			writes[e.Key]++
			final[e.Key] = e.Val
			m.CounterWrites++
			if r, ok := reads[e.Req]; ok {
				spans[e.Key] = append(spans[e.Key], span{e.Owner, r.T, e.T})
			}
		}
	}
	for k, n := range writes {
		m.LostUpdates += n - int(final[k])
	}
	for _, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
		hit := make([]bool, len(ss))
		for i := range ss {
			for j := i + 1; j < len(ss) && ss[j].start < ss[i].end; j++ {
				if ss[j].owner != ss[i].owner {
					hit[i], hit[j] = true, true
				}
			}
		}
		for _, x := range hit {
			if x {
				m.Overlaps++
			}
		}
	}
}

type episode struct {
	fault, target string
	on, off       int64
}

// episodes pairs the harness's fault on/off events.
func episodes(evs []Event) []episode {
	var out []episode
	open := map[string]int{}
	for _, e := range evs {
		if e.Kind != EvFault {
			continue
		}
		id := e.Fault + "\x00" + e.Target
		switch e.Phase {
		case "on":
			open[id] = len(out)
			out = append(out, episode{fault: e.Fault, target: e.Target, on: e.T, off: e.T})
		case "off":
			if i, ok := open[id]; ok {
				out[i].off = e.T
				delete(open, id)
			}
		}
	}
	return out
}

// checkFaults attributes saves to pauses, counts spurious losses under short
// pauses and measures takeover after kills.
func checkFaults(evs []Event, p Params, m *Metrics) {
	ttl := int64(p.TTL)
	eps := episodes(evs)
	for _, e := range evs {
		if e.Kind == EvStall {
			m.Stalls++
		}
	}
	for _, ep := range eps {
		m.Episodes[ep.fault]++
		switch ep.fault {
		case "F1":
			for _, e := range evs {
				if e.Kind == EvLost && e.Src == ep.target && e.T >= ep.on && e.T <= ep.off+ttl {
					m.SpuriousF1++
					m.violate("F1: %s lost %s during a pause of %s", e.Src, e.Key, time.Duration(ep.off-ep.on))
				}
			}
		case "F2":
			n := 0
			for _, e := range evs {
				if e.Kind == EvFenced && e.Target == ep.target && e.T >= ep.on && e.T <= ep.off+2*ttl {
					n++
				}
			}
			m.PauseSaves += n
			if n > 0 {
				m.BittenPauses++
			}
		case "F5c":
			checkLateCleanup(evs, ep, m)
		case "F3", "F9":
			for _, r := range takeovers(evs, ep, ttl, EvStoreAcquire) {
				end := ep.on + int64(r*float64(ttl))
				if math.IsInf(r, 1) {
					end = math.MaxInt64
				}
				if stalled(evs, ep.on, end) > ttl/10 {
					m.TakeoversStalled = append(m.TakeoversStalled, r)
				} else {
					m.Takeovers = append(m.Takeovers, r)
				}
			}
			m.TakeoversClient = append(m.TakeoversClient, takeovers(evs, ep, ttl, EvAcquired)...)
		}
	}
}

// stalled returns how long the machine-wide stalls (EvStall) overlapped
// [from, to], in nanoseconds.
func stalled(evs []Event, from, to int64) int64 {
	var n int64
	for _, e := range evs {
		if e.Kind != EvStall {
			continue
		}
		if lo, hi := max(e.T0, from), min(e.T, to); hi > lo {
			n += hi - lo
		}
	}
	return n
}

// takeovers measures, for each key a killed holder held, the time from the
// kill to the next acquire (of kind: the store's grant or the client's
// lease) by a holder that was not killed, as a ratio of the TTL (+Inf if
// none came).
func takeovers(evs []Event, ep episode, ttl int64, kind string) []float64 {
	killed := map[string]bool{}
	for _, t := range strings.Split(ep.target, ",") {
		killed[t] = true
	}
	held := map[string]grantID{} // key -> grant held by a killed holder at the kill
	for _, e := range evs {
		if e.T > ep.on {
			break
		}
		if !killed[e.Src] {
			continue
		}
		switch e.Kind {
		case EvAcquired:
			held[e.Key] = grantID{e.Key, e.Owner, e.Token}
		case EvLost, EvReleased:
			if g, ok := held[e.Key]; ok && g.owner == e.Owner && g.token == e.Token {
				delete(held, e.Key)
			}
		}
	}
	var out []float64
	for key := range held {
		r := math.Inf(1)
		for _, e := range evs {
			if e.T > ep.on && e.Kind == kind && e.Err == "" && e.Token != 0 && e.Key == key && !killed[e.Src] {
				r = float64(e.T-ep.on) / float64(ttl)
				break
			}
		}
		out = append(out, r)
	}
	sort.Float64s(out)
	return out
}

// checkStuck finds keys without progress once the faults healed.
func checkStuck(evs []Event, p Params, m *Metrics) {
	progress := map[string]bool{}
	keys := map[string]bool{}
	for _, e := range evs {
		if e.Kind == EvAdmit || e.Kind == EvFenced {
			keys[e.Key] = true
			if e.Kind == EvAdmit && e.T >= p.QuietFrom && (p.End == 0 || e.T <= p.End) {
				progress[e.Key] = true
			}
		}
	}
	for k := range p.Final {
		keys[k] = true
	}
	var stuck []string
	for k := range keys {
		if !progress[k] {
			stuck = append(stuck, k+" (no progress after the faults healed)")
		} else if err := p.Final[k]; err != nil {
			stuck = append(stuck, k+" (final acquire: "+err.Error()+")")
		}
	}
	sort.Strings(stuck)
	m.Stuck = stuck
	for _, s := range stuck {
		m.violate("stuck key %s", s)
	}
}

// Quantile returns the q-quantile (0..1) of sorted xs by the nearest-rank
// method, NaN for none.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

// holdFor is the holder-side hold of one acquire or renew: TTL*(1-rho) -
// margin.
func holdFor(p Params) int64 {
	rho, margin := p.Rho, p.Margin
	if rho == 0 {
		rho = 0.01
	}
	if margin == 0 {
		margin = 5 * time.Millisecond
	}
	return int64(float64(p.TTL)*(1-rho)) - int64(margin)
}

// checkExclusion counts concurrent holders: a lease a client accepted while
// another grant of the key was still held by its holder's own rules (its
// last successful acquire or renew, sent at t, holds until t + TTL*(1-rho)
// - margin) and had not been released. A correct store never grants a key
// before the previous grant's TTL has passed by its clock, which is after
// that deadline; so each one is a store (or its deployment) breaking
// mutual exclusion: data lost by a restart, a Redlock majority that no
// longer knows the holder.
func checkExclusion(evs []Event, p Params, m *Metrics) {
	hold := holdFor(p)
	type holdRec struct {
		g     grantID
		src   string
		until int64 // holder-side deadline so far
		ended int64 // release sent (0: not yet)
	}
	eps := episodes(evs)
	live := map[string][]*holdRec{} // key -> grants seen
	recs := map[grantID]*holdRec{}
	// A release ends a hold when it is sent (events are in return order),
	// and a kill ends every hold of the killed process: a dead holder
	// cannot act on its lease, and a store may free its keys at once.
	released := map[grantID]int64{}
	killed := map[string]int64{}
	for _, ep := range eps {
		if ep.fault == "F3" || ep.fault == "F9" {
			for _, id := range strings.Split(ep.target, ",") {
				if _, ok := killed[id]; !ok {
					killed[id] = ep.on
				}
			}
		}
	}
	for _, e := range evs {
		if e.Kind == EvStoreRelease {
			g := grantID{e.Key, e.Owner, e.Token}
			if t, ok := released[g]; !ok || e.T0 < t {
				released[g] = e.T0
			}
		}
	}
	for _, e := range evs {
		g := grantID{e.Key, e.Owner, e.Token}
		switch e.Kind {
		case EvStoreAcquire, EvStoreRenew:
			if e.Err != "" || e.Token == 0 {
				continue
			}
			r := recs[g]
			if r == nil {
				r = &holdRec{g: g, src: e.Src, ended: released[g]}
				if k, ok := killed[e.Src]; ok && (r.ended == 0 || k < r.ended) {
					r.ended = k
				}
				recs[g] = r
				live[e.Key] = append(live[e.Key], r)
			}
			if d := e.T0 + hold; d > r.until {
				r.until = d
			}
		case EvAcquired:
			for _, r := range live[e.Key] {
				if r.g == g || r.until <= e.T {
					continue
				}
				if r.ended != 0 && r.ended <= e.T {
					continue
				}
				m.DoubleGrants++
				f := "none"
				for _, ep := range eps {
					if e.T >= ep.on-int64(p.TTL) && e.T <= ep.off+3*int64(p.TTL) {
						f = ep.fault
					}
				}
				m.DoubleByFault[f]++
				m.violate("%s accepted %s (token %d) while %s's grant (token %d) had %s left by its own deadline (fault: %s)",
					e.Src, e.Key, e.Token, r.src, r.g.token, time.Duration(r.until-e.T), f)
			}
		}
	}
}
