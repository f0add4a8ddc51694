package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
)

// probeGrace is how long in all the final probe keeps asking a store that
// does not answer (connection refused or broken, no server reachable, a
// request timed out) before it reports the store unreachable. That time
// does not count against a key's own wait: a store down for a few seconds
// at a high load is not a stuck key (zookeeper, seed 8201: "no ZooKeeper
// server reachable" for ~5 s at load 53, and the next key granted at once).
const probeGrace = 60 * time.Second

// probeOutcome classifies one acquire of the final probe.
type probeOutcome int

const (
	probeGranted probeOutcome = iota // the key was granted
	probeHeld                        // the store answered that someone holds it
	probeDown                        // the store did not answer
	probeFailed                      // the store answered with another error
)

// downPhrases are the words of the errors that say the store did not
// answer, for the clients that do not wrap a net.Error or an errno (gRPC's
// status errors, a driver's own message).
var downPhrases = []string{
	"code = Unavailable", "code = DeadlineExceeded", "connection refused", "connection reset",
	"broken pipe", "no route to host", "network is unreachable", "i/o timeout",
	"could not connect to a server", "server reachable",
}

// classifyProbe tells the final probe's answers apart: granted, held by
// someone (the store answered), the store did not answer, or another
// failure.
func classifyProbe(err error) probeOutcome {
	var ne net.Error
	switch {
	case err == nil:
		return probeGranted
	case errors.Is(err, leasehold.ErrHeld):
		return probeHeld
	case errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrConnectionClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne):
		return probeDown
	}
	msg := err.Error()
	for _, p := range downPhrases {
		if strings.Contains(msg, p) {
			return probeDown
		}
	}
	return probeFailed
}

// prober polls the keys of the final probe: each must be granted within
// wait while the store answers; the time the store does not answer is
// drawn from grace, shared by all keys, and added to the key's wait.
type prober struct {
	wait  time.Duration // a key's bound while the store answers
	grace time.Duration // what is left of the time the store may not answer
	down  time.Duration // the time it did not answer so far
	pause time.Duration // between attempts
}

// unreachable is the verdict once grace is spent (or the probe's context
// ended) on a store that did not answer.
func (p *prober) unreachable(err error) error {
	return fmt.Errorf("%w (no answer for %s in all): %w", check.ErrProbeUnreachable, p.down.Round(time.Millisecond), err)
}

// retry says whether to ask again after an attempt begun at t0 that
// failed with err (class c), or returns the key's verdict.
func (p *prober) retry(ctx context.Context, t0 time.Time, deadline *time.Time, c probeOutcome, err error) (bool, error) {
	if c == probeDown {
		if p.grace <= 0 || ctx.Err() != nil {
			return false, p.unreachable(err)
		}
		sleepCtx(ctx, p.pause)
		d := time.Since(t0)
		p.down += d
		p.grace -= d
		*deadline = deadline.Add(d)
		return true, nil
	}
	if time.Now().After(*deadline) || ctx.Err() != nil {
		return false, fmt.Errorf("not acquired within %s after every holder died: %w", p.wait, err)
	}
	sleepCtx(ctx, p.pause)
	return true, nil
}

// key polls acquire until it grants the key, the key stays held (or
// fails) past wait, or the store stops answering for longer than grace.
func (p *prober) key(ctx context.Context, acquire func(context.Context) error) error {
	deadline := time.Now().Add(p.wait)
	for {
		t0 := time.Now()
		err := acquire(ctx)
		c := classifyProbe(err)
		if c == probeGranted {
			return nil
		}
		if again, verdict := p.retry(ctx, t0, &deadline, c, err); !again {
			return verdict
		}
	}
}

// open opens the store, retrying while it does not answer (from grace).
func (p *prober) open(ctx context.Context, open func(context.Context) (leasehold.Store, error)) (leasehold.Store, error) {
	deadline := time.Now().Add(p.wait)
	for {
		t0 := time.Now()
		s, err := open(ctx)
		if err == nil {
			return s, nil
		}
		if again, verdict := p.retry(ctx, t0, &deadline, classifyProbe(err), err); !again {
			return nil, fmt.Errorf("open store: %w", verdict)
		}
	}
}

// finalProbe acquires every key from the harness after all holders died
// without releasing: each must be free within the takeover bound plus
// slack while the store answers (a store that does not answer for longer
// than probeGrace is reported unreachable: check.ErrProbeUnreachable, not
// a stuck key). Its grants join the history for the token checks.
func (h *harness) finalProbe(bound float64) map[string]error {
	out := map[string]error{}
	p := &prober{wait: time.Duration(bound*float64(h.cfg.TTL)) + h.cfg.TTL + time.Second,
		grace: h.probeGrace, pause: max(h.cfg.TTL/20, 5*time.Millisecond)}
	if p.grace == 0 {
		p.grace = probeGrace
	}
	ctx, cancel := context.WithTimeout(h.ctx, probeTimeout(p.wait, len(h.cfg.Keys))+p.grace)
	defer cancel()
	s, err := p.open(ctx, func(ctx context.Context) (leasehold.Store, error) { return h.cfg.Open(ctx, h.url) })
	if err != nil {
		for _, k := range h.cfg.Keys {
			out[k] = err
		}
		return out
	}
	defer s.Close()
	ws, _ := WrapStore(s, h.rec)
	c, err := leasehold.New(ws, &leasehold.Options{TTL: h.cfg.TTL, Label: "harness",
		Backoff: leasehold.ExpBackoff{Base: 5 * time.Millisecond, Cap: max(h.cfg.TTL/10, 10*time.Millisecond)}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	// Polls with single attempts rather than waiting through the client:
	// the probe asks whether the key is free, not how the client waits.
	for _, k := range h.cfg.Keys {
		out[k] = p.key(ctx, func(ctx context.Context) error {
			l, err := c.Acquire(ctx, k, leasehold.AcquireOptions{})
			if err == nil {
				_ = l.Release(ctx)
			}
			return err
		})
	}
	return out
}

// probeTimeout bounds the final probe of n keys, each given wait from its
// own turn: n waits and 30 s for the requests (and the probe's grace for
// a store that does not answer, added by finalProbe). It only stops a
// store that no longer answers; one 30 s for every key, as it was, ran
// out on Consul's 21 x TTL bound before the second of 8 keys was asked,
// and reported the keys after it stuck.
func probeTimeout(wait time.Duration, n int) time.Duration {
	return time.Duration(n)*wait + 30*time.Second
}
