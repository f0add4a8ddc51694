package check

import (
	"sort"
	"strconv"

	"github.com/leasehold-go/leasehold/faults/history"
)

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
func checkTokens(evs []history.Event, m *Metrics) {
	byKey := map[string][]grant{}
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Kind != history.EvStoreAcquire || e.Err != "" || e.Token == 0 {
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
