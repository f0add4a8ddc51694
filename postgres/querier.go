package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// querier is what the store needs from a connection pool. It has two
// implementations: poolQuerier over a *pgxpool.Pool and dbQuerier over a
// database/sql *sql.DB opened with pgx's stdlib driver.
type querier interface {
	queryRow(ctx context.Context, sql string, args ...any) scanner
	query(ctx context.Context, sql string, args ...any) (rows, error)
	exec(ctx context.Context, sql string, args ...any) (int64, error)
	// session takes a connection out of the pool for the caller's sole use
	// (an advisory lock's session).
	session(ctx context.Context) (session, error)
	// listen runs fn on a dedicated *pgx.Conn that is discarded afterwards
	// (it has LISTENed). It returns fn's error.
	listen(ctx context.Context, fn func(*pgx.Conn) error) error
}

type scanner interface {
	Scan(dest ...any) error
}

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// session is one connection held for an advisory lock's life.
type session interface {
	queryRow(ctx context.Context, sql string, args ...any) scanner
	// wait blocks until ctx is done (returning nil) or the connection
	// fails (returning the failure). It returns errNoWait at once when the
	// driver offers no way to wait.
	wait(ctx context.Context) error
	// close returns the connection to the pool, or discards it when broken
	// is true (which ends the server session and any lock it holds).
	close(broken bool)
}

// errNoWait: the session cannot watch its connection (a database/sql driver
// other than pgx's stdlib).
var errNoWait = errors.New("postgres: connection cannot be watched")

// pgxConner is implemented by pgx's stdlib driver connection.
type pgxConner interface{ Conn() *pgx.Conn }

// waitConn blocks until ctx is done or c fails. It does not hand ctx to pgx,
// whose context watcher may be configured to send the server a cancel
// request: to stop the wait it sets a read deadline in the past on the
// socket, which pgx treats as a recoverable timeout, and clears it after.
func waitConn(ctx context.Context, c *pgx.Conn) error {
	pc := c.PgConn()
	nc := pc.Conn()
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		_ = nc.SetReadDeadline(time.Now())
	})
	defer func() {
		if !stop() {
			<-fired
			_ = nc.SetReadDeadline(time.Time{})
		}
	}()
	for {
		if err := pc.WaitForNotification(context.Background()); err != nil {
			if ctx.Err() != nil && !pc.IsClosed() {
				return nil
			}
			return err
		}
	}
}

// ---- *pgxpool.Pool ----

type poolQuerier struct{ p *pgxpool.Pool }

func (q poolQuerier) queryRow(ctx context.Context, sql string, args ...any) scanner {
	return q.p.QueryRow(ctx, sql, args...)
}

func (q poolQuerier) query(ctx context.Context, sql string, args ...any) (rows, error) {
	return q.p.Query(ctx, sql, args...)
}

func (q poolQuerier) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := q.p.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (q poolQuerier) session(ctx context.Context) (session, error) {
	c, err := q.p.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return poolSession{c}, nil
}

func (q poolQuerier) listen(ctx context.Context, fn func(*pgx.Conn) error) error {
	c, err := q.p.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := c.Hijack()
	defer closeConn(conn)
	return fn(conn)
}

type poolSession struct{ c *pgxpool.Conn }

func (s poolSession) queryRow(ctx context.Context, sql string, args ...any) scanner {
	return s.c.QueryRow(ctx, sql, args...)
}

func (s poolSession) wait(ctx context.Context) error { return waitConn(ctx, s.c.Conn()) }

func (s poolSession) close(broken bool) {
	if broken {
		// Take it out of the pool at once (Release would destroy it in
		// the background) and end the server session.
		closeConn(s.c.Hijack())
		return
	}
	s.c.Release()
}

// closeTimeout bounds the goodbye sent when the store discards a connection.
const closeTimeout = 5 * time.Second

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = c.Close(ctx)
}

// ---- *sql.DB ----

type dbQuerier struct{ db *sql.DB }

func (q dbQuerier) queryRow(ctx context.Context, sql string, args ...any) scanner {
	return q.db.QueryRowContext(ctx, sql, args...)
}

func (q dbQuerier) query(ctx context.Context, sql string, args ...any) (rows, error) {
	rs, err := q.db.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rs}, nil
}

func (q dbQuerier) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	res, err := q.db.ExecContext(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q dbQuerier) session(ctx context.Context) (session, error) {
	c, err := q.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return dbSession{c}, nil
}

func (q dbQuerier) listen(ctx context.Context, fn func(*pgx.Conn) error) error {
	c, err := q.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var fnErr error
	err = c.Raw(func(dc any) error {
		pc, ok := dc.(pgxConner)
		if !ok {
			fnErr = errNoWait
			return nil
		}
		fnErr = fn(pc.Conn())
		// The connection has LISTENed: never hand it back to the pool.
		return driver.ErrBadConn
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type dbSession struct{ c *sql.Conn }

func (s dbSession) queryRow(ctx context.Context, sql string, args ...any) scanner {
	return s.c.QueryRowContext(ctx, sql, args...)
}

func (s dbSession) wait(ctx context.Context) error {
	var werr error
	err := s.c.Raw(func(dc any) error {
		pc, ok := dc.(pgxConner)
		if !ok {
			werr = errNoWait
			return nil
		}
		werr = waitConn(ctx, pc.Conn())
		if werr != nil {
			return driver.ErrBadConn
		}
		return nil
	})
	if werr != nil {
		return werr
	}
	return err
}

func (s dbSession) close(broken bool) {
	if broken {
		// Returning ErrBadConn from Raw makes database/sql discard the
		// driver connection instead of pooling it.
		_ = s.c.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = s.c.Close()
}
