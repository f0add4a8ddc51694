package prims

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/rwlock"
	"github.com/leasehold-go/leasehold/semaphore"
)

// HolderConfig configures a holder process of W8 or W9.
type HolderConfig struct {
	ID       string // holder id ("s2.1": slot 2, generation 1)
	URL      string // store URL
	Resource string // the workload's resource, base URL
	Role     string // check.ModePermit, ModeRead or ModeWrite
	Key      string // the semaphore's or the lock's key
	Slots    int    // W8: the semaphore's N
	Broken   bool   // the mutation: W8 uses N+1 slots, a W9 writer ignores readers
	TTL      time.Duration
	Work     time.Duration // an operation's work step, between its check and its write
	History  string
	Seed     uint64
}

// Args returns the flags ParseHolderArgs reads back.
func (c HolderConfig) Args() []string {
	return []string{"-id", c.ID, "-url", c.URL, "-resource", c.Resource, "-role", c.Role, "-key", c.Key,
		"-slots", strconv.Itoa(c.Slots), "-broken=" + strconv.FormatBool(c.Broken), "-ttl", c.TTL.String(),
		"-work", c.Work.String(), "-history", c.History, "-seed", strconv.FormatUint(c.Seed, 10)}
}

// ParseHolderArgs parses the flags written by Args.
func ParseHolderArgs(args []string) (HolderConfig, error) {
	var c HolderConfig
	fs := flag.NewFlagSet("prim-holder", flag.ContinueOnError)
	fs.StringVar(&c.ID, "id", "", "")
	fs.StringVar(&c.URL, "url", "", "")
	fs.StringVar(&c.Resource, "resource", "", "")
	fs.StringVar(&c.Role, "role", "", "")
	fs.StringVar(&c.Key, "key", "", "")
	fs.IntVar(&c.Slots, "slots", 0, "")
	fs.BoolVar(&c.Broken, "broken", false, "")
	fs.DurationVar(&c.TTL, "ttl", 0, "")
	fs.DurationVar(&c.Work, "work", 0, "")
	fs.StringVar(&c.History, "history", "", "")
	fs.Uint64Var(&c.Seed, "seed", 0, "")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.ID == "" || c.URL == "" || c.Resource == "" || c.Key == "" || c.History == "":
		return c, errors.New("prim-holder: -id, -url, -resource, -key and -history are required")
	case c.Role != check.ModePermit && c.Role != check.ModeRead && c.Role != check.ModeWrite:
		return c, fmt.Errorf("prim-holder: -role %q: want permit, read or write", c.Role)
	case c.TTL <= 0 || c.Work <= 0 || (c.Role == check.ModePermit && c.Slots < 1):
		return c, errors.New("prim-holder: -ttl and -work must be positive, and -slots for a permit")
	}
	return c, nil
}

// hold is one hold as the holder loop drives it.
type hold struct {
	lease   *leasehold.Lease
	key     string
	mode    string
	token   uint64
	epoch   uint64
	release func(context.Context) error
}

// RunHolder is a holder process of W8 or W9: until SIGTERM it takes the
// semaphore or the lock in its role, performs 2-4 operations (each: a
// checkpoint, POST /begin, the work step, then the write, on a context
// detached from the hold: a pause in the work step makes a stale write
// attempt), releases and waits up to TTL/4.
func RunHolder(ctx context.Context, cfg HolderConfig, open harness.Opener) error {
	rec, err := history.NewFileRecorder(cfg.History, cfg.ID)
	if err != nil {
		return err
	}
	defer rec.Close()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rec.Record(history.Event{Kind: history.EvStart, Note: fmt.Sprintf("pid=%d", os.Getpid())})
	var store leasehold.Store
	for store == nil {
		octx, cancel := context.WithTimeout(ctx, 5*time.Second)
		store, err = open(octx, cfg.URL)
		cancel()
		if err != nil {
			rec.Record(history.Event{Kind: history.EvMark, Note: "open store", Err: err.Error()})
			if ctx.Err() != nil {
				return nil
			}
			time.Sleep(cfg.TTL / 4)
		}
	}
	defer store.Close()
	client, err := leasehold.New(store, &leasehold.Options{TTL: cfg.TTL, Label: cfg.ID,
		Backoff: leasehold.ExpBackoff{Base: 5 * time.Millisecond, Cap: max(cfg.TTL/10, 10*time.Millisecond)}})
	if err != nil {
		return err
	}
	defer client.Close()
	take, err := taker(client, cfg)
	if err != nil {
		return err
	}
	l := &loop{cfg: cfg, rec: rec, rng: rand.New(rand.NewPCG(cfg.Seed, 7)),
		http: &http.Client{Timeout: 2 * time.Minute}}
	for ctx.Err() == nil {
		l.once(ctx, take)
	}
	return nil
}

// taker returns the function that takes one hold in cfg's role.
func taker(c *leasehold.Client, cfg HolderConfig) (func(context.Context) (*hold, error), error) {
	if cfg.Role == check.ModePermit {
		n := cfg.Slots
		if cfg.Broken {
			n++
		}
		sem, err := semaphore.New(c, n, &semaphore.Options{AllowUnsafeTokens: true})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*hold, error) {
			p, err := sem.Acquire(ctx, cfg.Key, leasehold.AcquireOptions{Wait: leasehold.WaitForever})
			if err != nil {
				return nil, err
			}
			return &hold{lease: p.Lease, key: p.Key(), mode: cfg.Role, token: p.Token(), release: p.Release}, nil
		}, nil
	}
	lock, err := rwlock.New(c, cfg.Key, &rwlock.Options{TTL: cfg.TTL})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*hold, error) {
		if cfg.Role == check.ModeWrite && cfg.Broken {
			// The writer that ignores readers: the gate alone.
			g, err := c.Acquire(ctx, cfg.Key+"/w", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
			if err != nil {
				return nil, err
			}
			return &hold{lease: g, key: cfg.Key, mode: cfg.Role, token: g.Token(), epoch: g.Token(), release: g.Release}, nil
		}
		lk := lock.RLock
		if cfg.Role == check.ModeWrite {
			lk = lock.Lock
		}
		h, err := lk(ctx, leasehold.WaitForever)
		if err != nil {
			return nil, err
		}
		s := h.Sequencer()
		return &hold{lease: h.Lease(), key: cfg.Key, mode: cfg.Role, token: s.Token, epoch: s.Epoch, release: h.Release}, nil
	}, nil
}

type loop struct {
	cfg  HolderConfig
	rec  history.Recorder
	rng  *rand.Rand
	http *http.Client
	seq  int
}

// once takes one hold, operates under it and releases it.
func (l *loop) once(ctx context.Context, take func(context.Context) (*hold, error)) {
	t0 := history.Mono()
	h, err := take(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.rec.Record(history.Event{T0: t0, Kind: history.EvAcqFail, Key: l.cfg.Key, Err: err.Error()})
			sleep(ctx, time.Duration(l.rng.Int64N(int64(l.cfg.TTL/10)+1)))
		}
		return
	}
	l.rec.Record(history.Event{T0: t0, Kind: history.EvAcquired, Key: h.key, Token: h.token, Val: int64(h.epoch), Note: h.mode, Left: int64(h.lease.Remaining())})
	for range 2 + l.rng.IntN(3) {
		if ctx.Err() != nil || !l.op(ctx, h) {
			break
		}
	}
	end := heldUntil(h.lease)
	err = h.release(context.WithoutCancel(ctx))
	l.rec.Record(history.Event{T0: end, Kind: history.EvReleased, Key: h.key, Token: h.token, Note: h.mode, Err: errText(err)})
	sleep(ctx, time.Duration(l.rng.Int64N(int64(l.cfg.TTL/4)+1)))
}

// heldUntil is the end of a hold as its holder sees it now: now, or its
// deadline if that has passed.
func heldUntil(l *leasehold.Lease) int64 {
	now := history.Mono()
	if left := time.Until(l.Deadline()); left < 0 {
		return now + int64(left)
	}
	return now
}

// op performs one operation; false ends the hold.
func (l *loop) op(ctx context.Context, h *hold) bool {
	if err := h.lease.Checkpoint(l.cfg.Work + l.cfg.TTL/10); err != nil {
		l.rec.Record(history.Event{Kind: history.EvOpAbort, Key: h.key, Token: h.token, Err: err.Error()})
		return false
	}
	l.seq++
	req := fmt.Sprintf("%s-%d", l.cfg.ID, l.seq)
	base := context.WithoutCancel(ctx)
	if _, err := l.post(base, "/begin", url.Values{"h": {l.cfg.ID}}); err != nil {
		return ctx.Err() == nil
	}
	time.Sleep(l.cfg.Work)
	v := url.Values{"h": {l.cfg.ID}, "r": {req}, "t": {strconv.FormatUint(h.token, 10)}}
	path := "/sem"
	if h.mode == check.ModePermit {
		v.Set("k", h.key)
	} else {
		path = "/rw"
		v.Set("e", strconv.FormatUint(h.epoch, 10))
		v.Set("m", h.mode[:1])
	}
	f0 := history.Mono()
	st, err := l.post(base, path, v)
	l.rec.Record(history.Event{T0: f0, Kind: history.EvFWrite, Key: h.key, Token: h.token, Req: req, Status: st, Err: errText(err)})
	return err == nil && st != http.StatusConflict
}

func (l *loop) post(ctx context.Context, path string, v url.Values) (int, error) {
	q, err := http.NewRequestWithContext(ctx, http.MethodPost, l.cfg.Resource+path+"?"+v.Encode(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := l.http.Do(q)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
