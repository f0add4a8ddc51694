// Package clientgo lets client-go's leader election
// (k8s.io/client-go/tools/leaderelection) and a controller-runtime manager
// elect over any leasehold store (the embedded sqlite file, PostgreSQL,
// Redis, etcd, ...), not only a Kubernetes Lease: a [Lock] is a
// resourcelock.Interface whose leadership is a leasehold lease on one key,
// with the lease's fencing token as the leader's epoch ([Lock.Term]).
//
//	lock, err := clientgo.New(store, "elect/my-controller", podName, nil)
//	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{Lock: lock, ...})
//	// or: manager.Options{LeaderElection: true, LeaderElectionResourceLockInterface: lock, ...}
//
// This is a module of its own, so that client-go's dependencies reach only
// the programs that use it.
//
// # How client-go's calls map onto the store
//
// client-go's elector reads the record (Get), creates it when there is none
// (Create), and otherwise writes its own record over the one it read
// (Update), relying on the API server's optimistic concurrency to refuse a
// write based on a stale read. Here the store's atomic steps do that work:
//
//   - Get reads the key's holder (Store.Holder); a free key is a NotFound
//     error, so client-go calls Create.
//   - Create is Store.Acquire: of two candidates that both found the key
//     free, one is granted and the other gets an AlreadyExists error
//     (wrapping the *leasehold.HeldError).
//   - Update by the holder is Store.Renew of the grant it holds: a
//     compare-and-extend by owner id and token, so a leader whose lease
//     expired and was taken gets a Conflict error (wrapping
//     leasehold.ErrNotHeld) and client-go stops leading. Update by a
//     candidate that holds nothing (client-go's take-over of an expired
//     leader) is Store.Acquire, granted only if the store's clock says the
//     key is free: against a live holder it is a Conflict. An Update based
//     on a stale record is thus refused whenever someone holds the key;
//     when nobody does, it is an acquire like any other, never a second
//     holder.
//   - Update with an empty identity (client-go's ReleaseOnCancel) is
//     Store.Release.
//
// # Where leasehold's model differs
//
// The TTL is the record's LeaseDurationSeconds (client-go's LeaseDuration,
// whole seconds, at least 1 s), measured by the store's clock. The
// authority on expiry is the store, not the candidates' observations:
// Get's raw bytes carry the time left by the store's clock, so client-go
// waits exactly that long before it tries to take over, and a take-over
// happens only when the store grants it. A restarted candidate with the
// same identity therefore waits for its previous lease to expire (client-go's
// own LeaseLock lets it take over at once): the store knows a grant by its
// owner id, which a new process does not have.
//
// The leader's deadline is leasehold's holder-side deadline: the send time
// of its last successful acquire or renew plus the TTL ([Term.Deadline]),
// which the store never grants the key to another before. client-go's
// elector counts its own lease from the end of its last successful call
// and gives up after RenewDeadline, so it may believe it leads a little
// past that deadline; work that must not overlap another leader's checks
// Term (or the fencing token, with the fence package) before each side
// effect. [Options.OnTerm] reports every renewal's term.
//
// The record is not stored whole: the store keeps the holder's label (the
// identity), its token and its expiry. LeaderTransitions reads as the
// token minus one, which grows with every grant but is not a count of
// changes of holder (a store's tokens may skip values; a leader that
// releases and wins again makes a new grant); AcquireTime and RenewTime
// are known only to the holder itself and are zero in another holder's
// record; LeaseDurationSeconds reads as the time left, not the holder's
// TTL; Strategy and PreferredHolder (coordinated leader election) are not
// kept, so the Coordinated mode of client-go is not supported. The
// identity is the holder's label, which every store reads back whole up
// to [MaxIdentity] bytes.
//
// # Status
//
// Works, with tests against client-go v0.37.2's own elector and
// controller-runtime v0.25.2's manager (cd clientgo && GOWORK=off go test
// -race -count=1 ./...): the calls client-go makes, in its order, on the
// memory store with a moved clock (first Create wins, stale Update is a
// Conflict, take-over after expiry with a higher token, release), and
// FuzzLockOps playing any sequence of them by two candidates; two
// candidates in two processes (the test binary run again as the child)
// running leaderelection.RunOrDie, on the embedded sqlite store, a real
// redis-server and a real PostgreSQL (lease mode): the child leads, the
// parent does not while it lives, the child is killed with SIGKILL and the
// parent leads after its lease expired, each term logged with its token
// and holder-side deadlines and checked for no overlap and increasing
// tokens; a follower's elector never tries an Update while the leader
// lives; two controller-runtime managers with
// LeaderElectionResourceLockInterface and no Kubernetes API server (the
// config given points at a listener that counts connections: none), the
// Runnable that needs leader election running on the leader only, the
// other starting with a higher token once the leader's manager stops.
//
// Not done: coordinated leader election (LeaseCandidate objects, the
// Strategy and PreferredHolder fields) has no equivalent; RecordEvent
// goes to [Options.OnEvent], not to Kubernetes events; the two-process
// test runs on sqlite, Redis and PostgreSQL, not on every store (the Lock
// uses only the Store contract, which leasetest checks on every store);
// session-bound grants (PostgreSQL's advisory mode, ZooKeeper, Consul)
// end when their process dies, before the holder-side deadline, which is
// safe but not what the two-process test's overlap check assumes, so they
// are not in it.
package clientgo
