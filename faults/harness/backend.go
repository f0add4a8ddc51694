package harness

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/netlab"
)

// Backend is a store under test: it starts the store's real servers (or
// its file), names the store by URL, and stops everything on Close.
type Backend interface {
	// Name is the store's row in the safety table.
	Name() string
	// Start starts the store with its files under dir.
	Start(ctx context.Context, dir string) error
	// Endpoints returns the host:port of each server the holders talk to;
	// the harness puts a proxy per holder in front of each. Nil: the store
	// has no network (the embedded store).
	Endpoints() []string
	// URL returns the store's URL with eps (proxies, in the order of
	// Endpoints) in place of the servers' addresses.
	URL(eps []string) string
	// Close stops every process the backend started.
	Close() error
}

// StorePauser can SIGSTOP and SIGCONT the store's servers (F8).
type StorePauser interface {
	PauseStore() error
	ResumeStore() error
}

// Healer is a store whose servers a fault can leave broken in a way only an
// operator repairs: a bug of the server, not of the lease store. Heal checks
// the store once a fault has ended and repairs it if it must, saying what it
// found and did ("" when nothing was needed). The run notes it, and its
// quiet window (every key must progress) starts after the repair.
type Healer interface {
	Heal(ctx context.Context) (string, error)
}

// StoreRestarter can SIGKILL the store's servers and start them again on
// the same ports and data (F9). With wipe, the data is deleted before the
// restart: a restart without persistence (F9b).
type StoreRestarter interface {
	KillStore() error
	RestartStore(ctx context.Context, wipe bool) error
}

// BackingRestarter is a store whose server keeps its data in a database
// of its own (Kubernetes: the apiserver's etcd): it can SIGKILL that
// database and start it again on its data, under the running server
// (F9k).
type BackingRestarter interface {
	KillBacking() error
	RestartBacking(ctx context.Context) error
}

// Wiper marks a StoreRestarter whose data loss on restart is a fault worth
// its own episode (Redis without persistence).
type Wiper interface{ WipeMeaningful() bool }

// MajorityStore is a store of independent masters where a majority
// decides (Redlock): it can kill one master and restart it without its
// data, for the split-majority fault (F9m).
type MajorityStore interface {
	KillMaster(i int)
	RestartMaster(ctx context.Context, i int) error
}

// LeaderKiller can kill a replicated store's leader and restart it (F10).
type LeaderKiller interface {
	KillLeader(ctx context.Context) (string, error)
	RestartNode(ctx context.Context, node string) error
}

// MemberPartitioner is a replicated store whose members run in the run's
// network lab, member i in the lab's member i, so that the links between
// members can be cut (F13-F16) while the holders, in the run's namespace,
// still reach every member through their proxies.
type MemberPartitioner interface {
	// Lab is the lab the members run in; nil when the run has none
	// (LEASEHOLD_NETLAB=off): the member partitions do not run then.
	Lab() *netlab.Lab
	// Members is the number of members.
	Members() int
	// LeaderMember returns the member that leads now (ask the members
	// until one claims it; a partitioned old leader may still claim it:
	// see LeaderSeen).
	LeaderMember(ctx context.Context) (int, error)
	// LeaderSeen returns the member that member i follows as its leader
	// (i itself when it leads), or -1 when it has none (it lost its
	// leader); an error when i does not answer.
	LeaderSeen(ctx context.Context, i int) (int, error)
	// AttachedMembers returns the members that some holders' clients are
	// attached to (pinned: they talk to no other member), in order; nil
	// when every holder's client spreads over all members. F14 isolates
	// one of them if it can.
	AttachedMembers() []int
}

// HolderURLer is a store that gives each holder slot a URL of its own (an
// etcd holder pinned to one member), from the slot's index and its proxies
// (in the order of Endpoints). Without it every holder gets URL(eps).
type HolderURLer interface {
	HolderURL(slot int, eps []string) string
}

// ClockStepper can step the store server's wall clock (F11), if
// CanStepClock says so (else its note says why not).
type ClockStepper interface {
	CanStepClock() (bool, string)
	StepClock(d time.Duration) error
}

// LateCleanupStore is a store whose acquire, when its reply is lost, sends
// a clean-up of its own on another connection (F5c). LateCleanup says how
// to inject that fault, or (ok false) why it does not apply to this store.
type LateCleanupStore interface {
	LateCleanup() (f LateCleanup, ok bool, why string)
}

// LateCleanup describes the late clean-up fault on one store's protocol.
type LateCleanup struct {
	// Granted recognises, in a reply chunk from the server, the answer of
	// an acquire that granted the key: the reply to drop.
	Granted func(chunk []byte) bool
	// Runs recognises a request chunk that runs a statement: the chunks
	// to hold back (a statement's preparation must go through, or the
	// client never sends the statement itself).
	Runs func(chunk []byte) bool
	// Wait is how long the store's client waits for the clean-up's answer
	// before it gives up (its acquire returns then).
	Wait time.Duration
	// SameKey recognises a request chunk that names the same key as req,
	// the request whose reply was dropped: the other holders' requests
	// held back until the retry has won (nil: none held).
	SameKey func(req, chunk []byte) bool
}

// GrantLoser is a store whose design lets it end a grant early (lose it,
// or expire it before its holder's deadline) under some fault classes:
// the lease-history check lets an acquire in those faults' windows take
// over a live grant (check.Params.LossFaults), and holds every other
// overlap against the store. A store without it declares none.
type GrantLoser interface {
	LossFaults() []string
}

// lossFaults returns the fault classes b declares it may lose a grant
// under (GrantLoser), nil for none.
func lossFaults(b Backend) []string {
	if gl, ok := b.(GrantLoser); ok {
		return gl.LossFaults()
	}
	return nil
}

// TakeoverBounder states a store's documented takeover bound after a holder
// dies, as a ratio of ttl, when it is not the default: TTL plus one renew
// period (4/3 x TTL).
type TakeoverBounder interface {
	TakeoverBound(ttl time.Duration) float64
}

// pauseAll SIGSTOPs every process of a store of several servers.
func pauseAll(ps []*testserver.Process) error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Pause())
	}
	return errors.Join(errs...)
}

// resumeAll SIGCONTs every process pauseAll stopped.
func resumeAll(ps []*testserver.Process) error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Resume())
	}
	return errors.Join(errs...)
}
