package check

import (
	"fmt"
	"time"
)

// StallResult is the outcome of one W7 run.
type StallResult struct {
	Store   string
	Seed    uint64
	Unsafe  bool
	Seconds float64
	Writers int
	Keys    int

	Sent        int // fenced writes sent
	Landed      int // writes the handler landed
	Refused     int // 409: the guard refused the token as stale
	GaveUp      int // the writer gave up (its timeout) before an answer
	Unavailable int // 503: the request's context ended while it waited for the resource
	// AcquireRetries counts the acquires a writer tried again after a lost
	// grant (one that arrived after the client's deadline) or a store
	// failure.
	AcquireRetries int
	Stalls         int // handler stalls after an admission
	// Overtaken counts the stalls during which a higher token for the same
	// key reached the server: the interleaving the workload is for.
	Overtaken   int
	StaleLanded int
	Violations  []string // the first stale writes, for inspection
	Invalid     []string // why the run proves nothing
	Missed      []string // a target missed: stale writes with the default options
}

// Landing is a write as the W7 handler landed it, in landing order.
type Landing struct {
	Key   string
	Token uint64
	T     int64 // history.Mono() when it landed
	Req   string
}

// StaleLandings scans writes in landing order and returns how many landed
// with a token lower than a write already landed on the same key, with a
// description of the first few.
func StaleLandings(lands []Landing) (int, []string) {
	highest := map[string]Landing{}
	n := 0
	var out []string
	for _, l := range lands {
		h, ok := highest[l.Key]
		if ok && l.Token < h.Token {
			n++
			if len(out) < 5 {
				out = append(out, fmt.Sprintf("W7 %s: write %s with token %d landed %s after write %s with token %d",
					l.Key, l.Req, l.Token, time.Duration(l.T-h.T).Round(time.Millisecond), h.Req, h.Token))
			}
			continue
		}
		highest[l.Key] = l
	}
	return n, out
}

// JudgeStall decides a W7 run's validity and missed target from its
// counts: with UnsafeConcurrent (the negative control) some stale write
// must land, with the default options none may, and some stall must have
// been overtaken by a newer token or the run proves nothing.
func JudgeStall(res *StallResult) {
	switch {
	case res.Unsafe && res.StaleLanded == 0:
		res.Invalid = append(res.Invalid, fmt.Sprintf("W7 negative control: UnsafeConcurrent landed no stale write (%d stalls, %d overtaken): the workload cannot show what it claims to catch", res.Stalls, res.Overtaken))
	case !res.Unsafe && res.Overtaken == 0:
		res.Invalid = append(res.Invalid, fmt.Sprintf("W7: no stall was overtaken by a newer token (%d stalls)", res.Stalls))
	}
	if !res.Unsafe && res.StaleLanded > 0 {
		res.Missed = append(res.Missed, fmt.Sprintf("W7: %d stale writes landed through fence.Middleware with default options", res.StaleLanded))
	}
}
