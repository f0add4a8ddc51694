package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/proxy"
	"github.com/leasehold-go/leasehold/faults/resource"
	_ "modernc.org/sqlite" // the stall of the embedded store: a held write lock
)

// The CLI workload checks the rule of leasehold run: the command's process
// group is dead before the store can grant the key to anyone else. Its
// holders are leasehold run processes contending for one key; the
// protected writes come from the command they run (RunCLIChild), which
// ignores SIGTERM. The faults hit the leasehold process, not the command:
//
//	C1  SIGSTOP of the holder's leasehold for 1.5-2.5 x TTL (past its deadline)
//	C2  SIGKILL of the holder's leasehold
//	C3  the holder's renewals stall for 2 x TTL (its proxies partitioned; on
//	    the embedded store, a write lock held by the harness)
//
// The check: no command issues a write after the next holder's grant. The
// grant time used is the next command's start, which comes after its
// holder's grant by leasehold's fork and exec: a write between the grant
// and that start would go unseen, so the margin is reported too.

// cliKey is the key the CLI workload's holders contend for.
const cliKey = "cli"

// CLIConfig configures one run of the CLI workload.
type CLIConfig struct {
	Backend   Backend
	Open      Opener
	Leasehold string   // the leasehold binary
	ChildCmd  []string // argv prefix of the command, e.g. {"/path/to/faults", "cli-child"}
	Env       []string // added to the environment of leasehold and its command
	Dir       string
	Holders   int           // default 3
	TTL       time.Duration // default 1 s; raised to the store's MinTTL
	Duration  time.Duration // the schedule runs every class once, then repeats until this has passed
	Seed      uint64
	Log       func(format string, a ...any)
}

type cliSlot struct {
	idx     int
	rng     *rand.Rand // the slot's own: its loop runs beside the schedule
	proxies []*proxy.Proxy
	mu      sync.Mutex
	gen     int
	proc    *testserver.Process
	child   string // id of the command of the current generation
}

type cliRun struct {
	cfg   CLIConfig
	ctx   context.Context
	url   string
	res   *resource.Server
	rec   *history.MemRecorder
	slots []*cliSlot
	store leasehold.Store // the harness's own handle, to see who holds the key
	rng   *rand.Rand      // the schedule's
	procs procSet
}

// RunCLI runs the CLI workload once: it starts the store, the resource
// and a proxy per holder slot and store endpoint (startCLI), keeps every
// slot's leasehold run going, runs the fault schedule (schedule), and,
// once every command is gone, checks the history.
func RunCLI(ctx context.Context, cfg CLIConfig) (res *check.CLIResult, err error) {
	if cfg.Holders == 0 {
		cfg.Holders = 3
	}
	if cfg.TTL == 0 {
		cfg.TTL = time.Second
	}
	if cfg.Backend == nil || cfg.Open == nil || cfg.Leasehold == "" || len(cfg.ChildCmd) == 0 || cfg.Dir == "" {
		return nil, errors.New("faults: CLIConfig needs Backend, Open, Leasehold, ChildCmd and Dir")
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "store"), 0o755); err != nil {
		return nil, err
	}
	r := &cliRun{cfg: cfg, ctx: ctx, rng: rand.New(rand.NewPCG(cfg.Seed, 0xc11)), rec: history.NewMemRecorder("harness", nil)}
	defer func() {
		if cerr := r.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := r.startCLI(); err != nil {
		return nil, err
	}
	loops, stopLoops := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, s := range r.slots {
		wg.Go(func() { r.keep(loops, s) })
	}
	result := &check.CLIResult{Store: cfg.Backend.Name(), Seed: cfg.Seed, TTL: r.cfg.TTL, Episodes: map[string]int{}, Bit: map[string]int{}, Dir: cfg.Dir}
	start := history.Mono()
	runErr := r.schedule(start, result)
	result.Seconds = float64(history.Mono()-start) / 1e9
	stopLoops()
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	// Every leasehold is gone; their watchdogs kill what is left.
	r.waitChildrenGone()
	evs, err := history.Merge(cfg.Dir, "cli-*.jsonl", r.rec.Events())
	if err != nil {
		return nil, err
	}
	check.CLI(evs, result)
	check.JudgeCLI(result)
	return result, nil
}

// close stops every process, proxy and server the run started.
func (r *cliRun) close() error {
	r.procs.killAll()
	for _, s := range r.slots {
		for _, p := range s.proxies {
			p.Close()
		}
	}
	if r.store != nil {
		r.store.Close()
	}
	if r.res != nil {
		r.res.Close()
	}
	b := r.cfg.Backend
	if err := b.Close(); err != nil {
		return fmt.Errorf("stop %s: %w", b.Name(), err)
	}
	return nil
}

// startCLI starts the store, opens the harness's own handle on it (raising
// the TTL to its MinTTL), starts the resource and makes the holder slots
// with their proxies.
func (r *cliRun) startCLI() error {
	b := r.cfg.Backend
	r.logf("%s (cli): starting the store", b.Name())
	if err := b.Start(r.ctx, filepath.Join(r.cfg.Dir, "store")); err != nil {
		return fmt.Errorf("start %s: %w", b.Name(), err)
	}
	r.url = b.URL(b.Endpoints())
	if err := r.open(); err != nil {
		return err
	}
	r.cfg.TTL = max(r.cfg.TTL, r.store.Info().MinTTL)
	r.res = resource.New(r.rec, false)
	if err := r.res.Start(); err != nil {
		return err
	}
	for i := range r.cfg.Holders {
		s := &cliSlot{idx: i, rng: rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)+1))}
		for _, ep := range b.Endpoints() {
			p, err := proxy.New(ep)
			if err != nil {
				return err
			}
			s.proxies = append(s.proxies, p)
		}
		r.slots = append(r.slots, s)
	}
	return nil
}

// schedule runs every CLI fault class, in an order drawn from the seed,
// pass after pass until the configured duration has passed since start,
// counting the episodes and those that bit in result.
func (r *cliRun) schedule(start int64, result *check.CLIResult) error {
	for {
		order := check.IDs(check.CLIFaults)
		r.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			if r.ctx.Err() != nil {
				return r.ctx.Err()
			}
			bit, err := r.episode(c)
			if err != nil {
				return fmt.Errorf("%s (cli): %s: %w", r.cfg.Backend.Name(), c, err)
			}
			result.Episodes[c]++
			if bit {
				result.Bit[c]++
			}
		}
		if history.Since(start) >= r.cfg.Duration {
			return nil
		}
	}
}

func (r *cliRun) logf(format string, a ...any) {
	if r.cfg.Log != nil {
		r.cfg.Log(format, a...)
	}
}

// open opens the harness's own handle on the store, waiting for a server
// that is still starting.
func (r *cliRun) open() error {
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	for {
		s, err := r.cfg.Open(ctx, r.url)
		if err == nil {
			if m, ok := s.(interface{ Migrate(context.Context) error }); ok {
				if err := m.Migrate(ctx); err != nil {
					s.Close()
					return fmt.Errorf("set up store %s: %w", r.url, err)
				}
			}
			r.store = s
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("open %s: %w", r.url, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
