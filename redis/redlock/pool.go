package redlock

import "sync/atomic"

// poolSize is the most goroutines kept per master to send requests. A
// request beyond them (more calls at once than that) gets a goroutine of
// its own, which ends with it.
const poolSize = 32

// pool keeps goroutines that send the requests of rounds to one master.
// A round does not start a goroutine per master: a new goroutine's stack
// starts small and grows to the Redis client's depth on every call (stack
// copies were 18% of a cycle's CPU); a kept one has grown already. Kept
// goroutines wait for work until Close.
type pool struct {
	jobs chan job // unbuffered: a send succeeds only to an idle goroutine
	kept atomic.Int32
}

type job struct {
	r *round
	i int
}

// dispatch runs master i's request of r: on an idle kept goroutine, else
// on a new one, kept while fewer than poolSize are.
func (s *Store) dispatch(r *round, i int) {
	p := &s.pools[i]
	select {
	case p.jobs <- job{r, i}:
		return
	default:
	}
	if p.kept.Add(1) <= poolSize {
		s.workers.Add(1)
		go s.work(p, job{r, i})
		return
	}
	p.kept.Add(-1)
	go r.run(i)
}

// work runs j, then the jobs sent to p, until Close.
func (s *Store) work(p *pool, j job) {
	defer s.workers.Done()
	for {
		j.r.run(j.i)
		select {
		case j = <-p.jobs:
		case <-s.bg.Done():
			return
		}
	}
}
