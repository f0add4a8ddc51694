package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Hold says which statements that follow a lost acquire reply
// LoseAcquireReply keeps in flight.
type Hold int

// What LoseAcquireReply holds after the lost reply.
const (
	HoldNothing    Hold = iota // every statement goes through at once
	HoldWrites                 // statements that change rows (UPDATE ...)
	HoldEverything             // every statement but a later acquire
)

// LostReply stands for the network between a Store and its server: the
// Store's next lease-row acquire is applied on the server but its reply is
// lost, and the statements sent after it that Hold selects are kept in
// flight (their sender sees them fail, as on a timeout) until Deliver
// runs them on the server, late.
type LostReply struct {
	real querier
	st   leaseStatements
	hold Hold

	mu    sync.Mutex
	armed bool
	lost  bool
	held  []heldStmt
}

type heldStmt struct {
	sql  string
	args []any
}

var errReplyLost = errors.New("test: reply lost in flight")

// LoseAcquireReply installs a LostReply on s, a *LeaseStore. Call it before
// s is used.
func LoseAcquireReply(s Store, hold Hold) *LostReply {
	ls := s.(*LeaseStore)
	f := &LostReply{real: ls.q, st: ls.st, hold: hold, armed: true}
	ls.q = f
	return f
}

// Held is the number of statements kept in flight.
func (f *LostReply) Held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.held)
}

// Deliver runs the statements kept in flight, in the order they were sent,
// and lets every later statement through.
func (f *LostReply) Deliver(ctx context.Context) error {
	f.mu.Lock()
	held := f.held
	f.held, f.lost = nil, false
	f.mu.Unlock()
	for _, h := range held {
		if _, err := f.real.exec(ctx, h.sql, h.args...); err != nil {
			return err
		}
	}
	return nil
}

// intercept reports whether sql is kept in flight (and keeps it), or fails
// with a lost reply after running (lose).
func (f *LostReply) intercept(sql string, args []any) (keep, lose bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sql == f.st.acquire {
		lose, f.armed = f.armed, false
		f.lost = f.lost || lose
		return false, lose
	}
	if !f.lost {
		return false, false
	}
	switch {
	case f.hold == HoldEverything,
		f.hold == HoldWrites && strings.HasPrefix(sql, "UPDATE"):
		f.held = append(f.held, heldStmt{sql, args})
		return true, false
	}
	return false, false
}

type errScanner struct{ err error }

func (e errScanner) Scan(...any) error { return e.err }

func (f *LostReply) queryRow(ctx context.Context, sql string, args ...any) scanner {
	keep, lose := f.intercept(sql, args)
	if keep {
		return errScanner{errReplyLost}
	}
	if lose {
		var (
			ok        bool
			token     int64
			label     string
			remaining int64
		)
		if err := f.real.queryRow(ctx, sql, args...).Scan(&ok, &token, &label, &remaining); err != nil {
			return errScanner{err}
		}
		return errScanner{errReplyLost}
	}
	return f.real.queryRow(ctx, sql, args...)
}

func (f *LostReply) query(ctx context.Context, sql string, args ...any) (rows, error) {
	return f.real.query(ctx, sql, args...)
}

func (f *LostReply) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if keep, _ := f.intercept(sql, args); keep {
		return 0, errReplyLost
	}
	return f.real.exec(ctx, sql, args...)
}

func (f *LostReply) session(ctx context.Context) (session, error) { return f.real.session(ctx) }

func (f *LostReply) listen(ctx context.Context, fn func(*pgx.Conn) error) error {
	return f.real.listen(ctx, fn)
}

// LockCheck is the check a holder of key publishes in its application_name.
func (s *AdvisoryStore) LockCheck(key string) string {
	_, check := s.lockID(key)
	return check
}
