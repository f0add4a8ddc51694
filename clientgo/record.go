package clientgo

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leasehold-go/leasehold"
)

// resource names the lock in the Kubernetes API errors it returns.
var resource = schema.GroupResource{Group: "leasehold", Resource: "leases"}

func notFound(key string) error { return apierrors.NewNotFound(resource, key) }

// alreadyExists is Create's error when another candidate holds the key.
func alreadyExists(key string, cause error) error {
	return &statusError{StatusError: apierrors.NewAlreadyExists(resource, key), cause: cause}
}

// conflict is Update's error when the grant is not this candidate's.
func conflict(key string, cause error) error {
	return &statusError{StatusError: apierrors.NewConflict(resource, key, cause), cause: cause}
}

// statusError is a Kubernetes API error (for client-go's apierrors.IsConflict
// and the like) that also matches its leasehold cause with errors.Is and
// errors.As (*leasehold.HeldError, leasehold.ErrNotHeld).
type statusError struct {
	*apierrors.StatusError
	cause error
}

func (e *statusError) Error() string {
	s := e.StatusError.Error()
	if c := e.cause.Error(); !strings.Contains(s, c) {
		s += ": " + c
	}
	return s
}

func (e *statusError) Unwrap() []error { return []error{e.StatusError, e.cause} }

// rawRecord is what Get returns as the record's raw bytes: the record, the
// holder's token and its time left. They differ from one read to the next
// while a holder lives, so client-go's elector (which restarts its own
// count of LeaseDurationSeconds whenever the raw bytes change) waits for
// the time left by the store's clock, read afresh each time, and tries to
// take over only once the store reports the key free.
type rawRecord struct {
	rl.LeaderElectionRecord
	Token     uint64        `json:"token"`
	Remaining time.Duration `json:"remainingNanoseconds"`
}

// Get reads who holds the key now and returns it as client-go's record,
// or a NotFound error when nobody does (client-go then calls Create).
//
// The store keeps the holder's label (HolderIdentity), its token and its
// time left. LeaseDurationSeconds is the time left by the store's clock,
// rounded up to a second (the holder's TTL is not kept), so that client-go
// waits that long before it tries to take over; LeaderTransitions is the
// token minus one, which grows with every grant (it is not a count of
// changes of holder: a store's tokens may skip values). AcquireTime and
// RenewTime are known only to the holder itself (this candidate's own
// send times) and are zero in the record of another holder.
func (l *Lock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	l.op.Lock()
	defer l.op.Unlock()
	h, err := l.store.Holder(ctx, l.key)
	if errors.Is(err, leasehold.ErrNotHeld) {
		l.forget(0)
		return nil, nil, notFound(l.key)
	}
	if err != nil {
		return nil, nil, err
	}
	l.forget(h.Token)
	rec := recordOf(h)
	l.mu.Lock()
	if l.held != nil {
		rec.AcquireTime = metav1.NewTime(l.term.Acquired)
		rec.RenewTime = metav1.NewTime(l.renewed)
	}
	l.mu.Unlock()
	raw, err := json.Marshal(rawRecord{LeaderElectionRecord: rec, Token: h.Token, Remaining: max(h.Remaining, h.MaxRemaining)})
	if err != nil {
		return nil, nil, err
	}
	return &rec, raw, nil
}

// forget drops this candidate's grant when the key is held under another
// token (0: by nobody): the grant was lost.
func (l *Lock) forget(token uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held != nil && l.held.Token != token {
		l.held = nil
		l.term = Term{}
	}
}

// recordOf is client-go's record of holder h (without the times).
func recordOf(h leasehold.Holder) rl.LeaderElectionRecord {
	left := h.Remaining
	if left <= 0 {
		left = h.MaxRemaining
	}
	transitions := 0
	if h.Token > 0 {
		transitions = int(min(h.Token-1, math.MaxInt32))
	}
	return rl.LeaderElectionRecord{
		HolderIdentity:       h.Label,
		LeaseDurationSeconds: int((left + time.Second - 1) / time.Second),
		LeaderTransitions:    transitions,
	}
}
