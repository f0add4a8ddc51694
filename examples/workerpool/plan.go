package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// plan is the stream a run enqueues.
type plan struct {
	msgs   []message // in queue order
	ids    int       // distinct msg_ids
	dupIDs int       // msg_ids enqueued as two rows
	slow   int       // messages whose processing outlasts the visibility timeout
}

// makePlan builds the stream of n messages:
//
//   - processing takes 2 to 20 ms, except for n/50 slow messages near the
//     end of the queue, which take 1.5 x vt (their row is redelivered while
//     the first worker still holds the lease: the second one waits, then
//     finds the message done) or 2.5 x vt (the second one gives up waiting
//     and hands the row back, then finds it done on a later delivery);
//   - one message in ten is enqueued twice: every other one as the very next
//     row (two workers claim both at once: the lease keeps one waiting), the
//     others at the end of the queue (the message is done long before: the
//     dedupe record answers); the 2.5 x vt messages are all enqueued twice,
//     as the next row.
//
// The payloads come from a generator seeded with seed.
func makePlan(n int, vt time.Duration, seed uint64) plan {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	slowWork := map[int]time.Duration{}
	p := plan{ids: n, slow: n / 50}
	for j := range p.slow {
		w := vt * 3 / 2
		if j%2 == 1 {
			w = vt * 5 / 2
		}
		slowWork[n-1-3*j] = w
	}
	var tail []message
	for i := range n {
		m := message{MsgID: fmt.Sprintf("m-%05d", i+1), Payload: 1 + rng.Int64N(1000), WorkMS: 2 + rng.IntN(19)}
		if w, ok := slowWork[i]; ok {
			m.WorkMS = int(w.Milliseconds())
		}
		p.msgs = append(p.msgs, m)
		switch {
		case slowWork[i] > vt*2 || i%20 == 5:
			p.msgs = append(p.msgs, m)
			p.dupIDs++
		case i%20 == 15:
			tail = append(tail, m)
			p.dupIDs++
		}
	}
	p.msgs = append(p.msgs, tail...)
	return p
}
