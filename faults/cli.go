package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
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

// CLIFaults are the CLI workload's fault classes.
var CLIFaults = []string{"C1", "C2", "C3"}

// CLIFaultNames describes each class.
var CLIFaultNames = map[string]string{
	"C1": "leasehold SIGSTOP for 1.5-2.5 x TTL",
	"C2": "leasehold SIGKILL",
	"C3": "the holder's renewals stall for 2 x TTL",
}

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

// CLIResult is the outcome of a run of the CLI workload.
type CLIResult struct {
	Store    string
	Seed     uint64
	TTL      time.Duration
	Seconds  float64
	Commands int // commands that started
	Writes   int // writes they issued
	Stopped  int // commands that did not finish their writes (killed by a fault's consequences or at the end of the run)
	Episodes map[string]int
	Bit      map[string]int // episodes whose target's command was stopped
	// AfterGrant counts writes issued by a command after a later holder's
	// grant (the target: 0); Worst is how late the latest of them was.
	AfterGrant int
	Worst      time.Duration
	// Margin is the smallest gap between a command's last write and the
	// next holder's start.
	Margin  time.Duration
	Fenced  int // writes the resource refused as stale
	Invalid []string
	Missed  []string
	Notes   []string
	Dir     string
}

// cliSlot is one holder: a leasehold run process, respawned when it exits.
type cliSlot struct {
	idx     int
	rng     *rand.Rand // the slot's own: its loop runs beside the schedule
	proxies []*Proxy
	mu      sync.Mutex
	gen     int
	proc    *Proc
	child   string // id of the command of the current generation
}

type cliRun struct {
	cfg   CLIConfig
	ctx   context.Context
	url   string
	res   *Resource
	rec   *MemRecorder
	slots []*cliSlot
	store leasehold.Store // the harness's own handle, to see who holds the key
	rng   *rand.Rand      // the schedule's
	procs Procs
}

// RunCLI runs the CLI workload once.
func RunCLI(ctx context.Context, cfg CLIConfig) (res *CLIResult, err error) {
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
	r := &cliRun{cfg: cfg, ctx: ctx, rng: rand.New(rand.NewPCG(cfg.Seed, 0xc11)), rec: NewMemRecorder("harness", nil)}
	b := cfg.Backend
	defer func() {
		r.procs.KillAll()
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
		if cerr := b.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("stop %s: %w", b.Name(), cerr)
		}
	}()
	r.logf("%s (cli): starting the store", b.Name())
	if err := b.Start(ctx, filepath.Join(cfg.Dir, "store")); err != nil {
		return nil, fmt.Errorf("start %s: %w", b.Name(), err)
	}
	r.url = b.URL(b.Endpoints())
	if err := r.open(); err != nil {
		return nil, err
	}
	if min := r.store.Info().MinTTL; min > r.cfg.TTL {
		r.cfg.TTL = min
	}
	r.res = NewResource(r.rec, false)
	if err := r.res.Start(); err != nil {
		return nil, err
	}
	for i := range cfg.Holders {
		s := &cliSlot{idx: i, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))}
		for _, ep := range b.Endpoints() {
			p, err := NewProxy(ep)
			if err != nil {
				return nil, err
			}
			s.proxies = append(s.proxies, p)
		}
		r.slots = append(r.slots, s)
	}
	loops, stopLoops := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, s := range r.slots {
		wg.Go(func() { r.keep(loops, s) })
	}
	result := &CLIResult{Store: b.Name(), Seed: cfg.Seed, TTL: r.cfg.TTL, Episodes: map[string]int{}, Bit: map[string]int{}, Dir: cfg.Dir}
	start := Mono()
	var runErr error
schedule:
	for pass := 0; ; pass++ {
		order := append([]string(nil), CLIFaults...)
		r.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			if ctx.Err() != nil {
				runErr = ctx.Err()
				break schedule
			}
			bit, err := r.episode(c)
			if err != nil {
				runErr = fmt.Errorf("%s (cli): %s: %w", b.Name(), c, err)
				break schedule
			}
			result.Episodes[c]++
			if bit {
				result.Bit[c]++
			}
		}
		if Since(start) >= cfg.Duration {
			break
		}
	}
	result.Seconds = float64(Mono()-start) / 1e9
	stopLoops()
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	// Every leasehold is gone; their watchdogs kill what is left.
	r.waitChildrenGone()
	evs, err := mergeHistories(cfg.Dir, "cli-*.jsonl", r.rec.Events())
	if err != nil {
		return nil, err
	}
	CheckCLI(evs, result)
	judgeCLI(result)
	return result, nil
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

// keep runs slot s's leasehold run, again each time it exits, until ctx
// ends; then it kills the last one.
func (r *cliRun) keep(ctx context.Context, s *cliSlot) {
	for ctx.Err() == nil {
		p, err := r.spawn(s)
		if err != nil {
			r.rec.Record(Event{Kind: EvMark, Target: fmt.Sprintf("slot%d", s.idx), Err: err.Error()})
			sleepCtx(ctx, r.cfg.TTL)
			continue
		}
		select {
		case <-p.Done():
			r.rec.Record(Event{Kind: EvMark, Target: p.Name, Note: "leasehold exited"})
			sleepCtx(ctx, time.Duration(s.rng.Int64N(int64(r.cfg.TTL/10)+1)))
		case <-ctx.Done():
			p.Kill()
		}
	}
}

// spawn starts the next generation of slot s.
func (r *cliRun) spawn(s *cliSlot) (*Proc, error) {
	s.mu.Lock()
	s.gen++
	id := fmt.Sprintf("c%d.%d", s.idx, s.gen)
	s.child = id
	s.mu.Unlock()
	eps := make([]string, len(s.proxies))
	for i, p := range s.proxies {
		eps[i] = p.Addr()
	}
	url := r.url
	if len(eps) > 0 {
		url = r.cfg.Backend.URL(eps)
	}
	T := r.cfg.TTL
	child := CLIChildConfig{ID: id, Resource: r.res.URL(), History: filepath.Join(r.cfg.Dir, "cli-"+id+".jsonl"),
		Work: T / 5, Ops: 20 + int(s.rng.Int64N(10))} // 4-6 x TTL: it outlasts a fault that hits it early
	argv := []string{r.cfg.Leasehold, "run", "--key", cliKey, "--ttl", T.String(), "--wait", "1h", "--label", fmt.Sprintf("slot%d", s.idx), "--store", url, "--"}
	argv = append(append(argv, r.cfg.ChildCmd...), child.Args()...)
	p, err := StartProc(ProcSpec{Name: id, Argv: argv, Env: r.cfg.Env, Log: filepath.Join(r.cfg.Dir, fmt.Sprintf("log-slot%d.txt", s.idx))})
	if err != nil {
		return nil, err
	}
	r.procs.Add(p)
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	return p, nil
}

// holder waits until some slot's command holds the key and has written,
// and returns the slot and its command's id.
func (r *cliRun) holder() (*cliSlot, string, error) {
	limit := 20*r.cfg.TTL + 10*time.Second
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && r.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(r.ctx, r.cfg.TTL)
		h, err := r.store.Holder(ctx, cliKey)
		cancel()
		if err == nil {
			var idx int
			if _, err := fmt.Sscanf(h.Label, "slot%d", &idx); err == nil && idx < len(r.slots) {
				s := r.slots[idx]
				s.mu.Lock()
				id, p := s.child, s.proc
				s.mu.Unlock()
				if p != nil && !p.Exited() && r.wrote(id) {
					return s, id, nil
				}
			}
		}
		sleepCtx(r.ctx, 20*time.Millisecond)
	}
	return nil, "", fmt.Errorf("no command held the key and wrote within %s (see %s)", limit, r.cfg.Dir)
}

// wrote reports whether command id has made a write the resource saw.
func (r *cliRun) wrote(id string) bool {
	for _, e := range r.rec.Events() {
		if (e.Kind == EvAdmit || e.Kind == EvFenced) && e.Target == id {
			return true
		}
	}
	return false
}

// stopped reports whether command id is gone without having finished its
// writes (from its history): something killed it.
func (r *cliRun) stopped(id string) bool {
	evs, _ := ReadHistoryFile(filepath.Join(r.cfg.Dir, "cli-"+id+".jsonl"))
	pid := 0
	for _, e := range evs {
		switch e.Kind {
		case EvReleased:
			return false
		case EvStart:
			pid, _ = strconv.Atoi(strings.TrimPrefix(e.Note, "pid="))
		}
	}
	return pid > 0 && procGone(pid)
}

// procGone reports whether process pid has exited: it is gone, or a zombie
// (an orphan waits for whoever reaps orphans here, which may be slow).
func procGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// episode injects one fault on the current holder; it reports whether the
// holder's command was stopped before finishing (the fault bit).
func (r *cliRun) episode(c string) (bool, error) {
	T := r.cfg.TTL
	s, id, err := r.holder()
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	r.logf("  %s %s (%s)", c, CLIFaultNames[c], id)
	fault := func(phase, note string) {
		r.rec.Record(Event{Kind: EvFault, Fault: c, Phase: phase, Target: id, Note: note})
	}
	switch c {
	case "C1":
		f := 1.5 + r.rng.Float64()
		fault("on", fmt.Sprintf("SIGSTOP %.2f x TTL", f))
		_ = p.Signal(syscall.SIGSTOP)
		sleepCtx(r.ctx, time.Duration(f*float64(T)))
		_ = p.Signal(syscall.SIGCONT)
		fault("off", "SIGCONT")
	case "C2":
		fault("on", "SIGKILL")
		p.Kill()
		fault("off", "")
	case "C3":
		fault("on", "stall")
		release, err := r.stall(s)
		if err != nil {
			return false, err
		}
		sleepCtx(r.ctx, 2*T)
		release()
		fault("off", "")
	}
	// Let the next holder take over and write.
	sleepCtx(r.ctx, 2*T)
	return r.stopped(id), nil
}

// stall makes slot s's renewals stall until the returned function is
// called: its proxies black-hole the traffic, or, on the embedded store,
// the harness holds the database's write lock.
func (r *cliRun) stall(s *cliSlot) (func(), error) {
	if len(s.proxies) > 0 {
		for _, p := range s.proxies {
			p.Partition()
		}
		return func() {
			for _, p := range s.proxies {
				p.Heal()
			}
		}, nil
	}
	sq, ok := r.cfg.Backend.(*SQLite)
	if !ok {
		return nil, fmt.Errorf("no way to stall the %s store", r.cfg.Backend.Name())
	}
	db, err := sql.Open("sqlite", sq.path)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(r.ctx)
	if err == nil {
		_, err = conn.ExecContext(r.ctx, "PRAGMA busy_timeout = 10000")
	}
	if err == nil {
		_, err = conn.ExecContext(r.ctx, "BEGIN IMMEDIATE")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("take the write lock of %s: %w", sq.path, err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		db.Close()
	}, nil
}

// waitChildrenGone waits (up to 10 s) until no command process is left.
func (r *cliRun) waitChildrenGone() {
	hist, _ := filepath.Glob(filepath.Join(r.cfg.Dir, "cli-*.jsonl"))
	var pids []int
	for _, f := range hist {
		evs, _ := ReadHistoryFile(f)
		for _, e := range evs {
			if e.Kind == EvStart {
				if pid, err := strconv.Atoi(strings.TrimPrefix(e.Note, "pid=")); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	end := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for !procGone(pid) && time.Now().Before(end) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// CheckCLI fills res's counts from the CLI workload's history: the
// commands' starts and writes (recorded by RunCLIChild) and the resource's
// refusals. A command's successor is the command with the next higher
// token; its start bounds its holder's grant from above.
func CheckCLI(evs []Event, res *CLIResult) {
	type command struct {
		id       string
		token    uint64
		start    int64
		writes   []int64
		finished bool
	}
	byID := map[string]*command{}
	get := func(id string) *command {
		c := byID[id]
		if c == nil {
			c = &command{id: id}
			byID[id] = c
		}
		return c
	}
	for _, e := range evs {
		switch {
		case e.Kind == EvFenced:
			res.Fenced++
		case !strings.HasPrefix(e.Src, "c"):
		case e.Kind == EvStart:
			c := get(e.Src)
			c.token, c.start = e.Token, e.T0
		case e.Kind == EvFWrite:
			c := get(e.Src)
			c.writes = append(c.writes, e.T0)
		case e.Kind == EvReleased:
			get(e.Src).finished = true
		}
	}
	var cs []*command
	for _, c := range byID {
		if c.start != 0 {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].token < cs[j].token })
	res.Commands = len(cs)
	res.Margin = -1
	for i, c := range cs {
		res.Writes += len(c.writes)
		if !c.finished {
			res.Stopped++
		}
		if i > 0 && cs[i-1].token == c.token {
			res.Notes = append(res.Notes, fmt.Sprintf("commands %s and %s ran with the same token %d", cs[i-1].id, c.id, c.token))
		}
		if i+1 == len(cs) || len(c.writes) == 0 {
			continue
		}
		next := cs[i+1].start
		for _, w := range c.writes {
			if w > next {
				res.AfterGrant++
				res.Worst = max(res.Worst, time.Duration(w-next))
			}
		}
		last := c.writes[len(c.writes)-1]
		if m := time.Duration(next - last); res.Margin < 0 || m < res.Margin {
			res.Margin = m
		}
	}
}

// judgeCLI decides validity and missed targets.
func judgeCLI(r *CLIResult) {
	if r.AfterGrant > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("writes by a command after the next holder's grant: %d (the latest %s after it)", r.AfterGrant, r.Worst.Round(time.Millisecond)))
	}
	for _, c := range CLIFaults {
		if r.Episodes[c] > 0 && r.Bit[c] == 0 {
			r.Invalid = append(r.Invalid, fmt.Sprintf("%s (%s) never stopped the targeted command", c, CLIFaultNames[c]))
		}
	}
	if r.Commands < 2 {
		r.Invalid = append(r.Invalid, "fewer than two commands ran")
	}
}

// CLISummary is one line about a CLI workload run.
func CLISummary(r *CLIResult) string {
	status := "ok"
	switch {
	case len(r.Missed) > 0:
		status = "MISSED: " + strings.Join(r.Missed, "; ")
	case len(r.Invalid) > 0:
		status = "INVALID: " + strings.Join(r.Invalid, "; ")
	}
	var eps []string
	for _, c := range CLIFaults {
		eps = append(eps, fmt.Sprintf("%s %d/%d", c, r.Bit[c], r.Episodes[c]))
	}
	return fmt.Sprintf("%-18s cli  seed %d  TTL %s  %.0f s: %d commands, %d writes, %d killed (faults that stopped their target: %s); writes after the next grant: %d, smallest margin %s, fenced %d: %s",
		r.Store, r.Seed, r.TTL, r.Seconds, r.Commands, r.Writes, r.Stopped, strings.Join(eps, ", "), r.AfterGrant, r.Margin.Round(time.Millisecond), r.Fenced, status)
}
