package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// delivery is one claim of a queue row: the row stays invisible to other
// workers until its visibility window ends, and is delivered again after
// that unless it is acked.
type delivery struct {
	Row       int64         // the queue row's id
	MsgID     string        // the message's id (duplicates share it)
	Payload   int64         // what the effect adds
	Work      time.Duration // how long processing takes
	Delivered int           // the row's delivery count, this one included: the claim's receipt
	Window    time.Duration // time left of the visibility window when claimed
}

// claimSQL takes the first visible, unacked row that no other claim has
// locked, and hides it for the visibility timeout ($1, milliseconds).
const claimSQL = `UPDATE %[1]s SET visible_at = clock_timestamp() + $1 * interval '1 millisecond',
	delivered = delivered + 1
WHERE id = (SELECT id FROM %[1]s WHERE visible_at <= clock_timestamp() AND NOT acked
	ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING id, msg_id, payload, work_ms, delivered,
	(extract(epoch FROM visible_at - clock_timestamp()) * 1000)::bigint`

// claim returns the next visible row, hidden for vt, or ok == false when
// there is none.
func (t tables) claim(ctx context.Context, db *sql.DB, vt time.Duration) (d delivery, ok bool, err error) {
	var workMS, windowMS int64
	err = db.QueryRowContext(ctx, fmt.Sprintf(claimSQL, t.queue()), vt.Milliseconds()).
		Scan(&d.Row, &d.MsgID, &d.Payload, &workMS, &d.Delivered, &windowMS)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return d, false, nil
	case err != nil:
		return d, false, fmt.Errorf("claim: %w", err)
	}
	d.Work = time.Duration(workMS) * time.Millisecond
	d.Window = time.Duration(windowMS) * time.Millisecond
	return d, true, nil
}

// ack removes a row from the queue for good. It is only called once the
// message's effect is known to be made (by this delivery or an earlier one).
func (t tables) ack(ctx context.Context, db *sql.DB, row int64) error {
	_, err := db.ExecContext(ctx, `UPDATE `+t.queue()+` SET acked = true WHERE id = $1`, row)
	if err != nil {
		return fmt.Errorf("ack row %d: %w", row, err)
	}
	return nil
}

// handBack makes a claimed row visible again after delay, so that it is
// redelivered, if this delivery is still the row's latest and the row is not
// acked: a hand-back never moves someone else's claim.
func (t tables) handBack(ctx context.Context, db *sql.DB, d delivery, delay time.Duration) error {
	_, err := db.ExecContext(ctx, `UPDATE `+t.queue()+`
		SET visible_at = clock_timestamp() + $3 * interval '1 millisecond'
		WHERE id = $1 AND delivered = $2 AND NOT acked`, d.Row, d.Delivered, delay.Milliseconds())
	if err != nil {
		return fmt.Errorf("hand back row %d: %w", d.Row, err)
	}
	return nil
}

// message is one row to enqueue.
type message struct {
	MsgID   string
	Payload int64
	WorkMS  int
}

// enqueue inserts the rows in order (their ids follow it) and one effects
// row per distinct msg_id (a fence needs its row to exist), in one
// transaction.
func (t tables) enqueue(ctx context.Context, db *sql.DB, msgs []message) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	const batch = 500
	for start := 0; start < len(msgs); start += batch {
		part := msgs[start:min(start+batch, len(msgs))]
		var b strings.Builder
		args := make([]any, 0, 3*len(part))
		for i, m := range part {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3)
			args = append(args, m.MsgID, m.Payload, m.WorkMS)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+t.queue()+` (msg_id, payload, work_ms) VALUES `+b.String(), args...); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+t.effects()+` (msg_id)
		SELECT DISTINCT msg_id FROM `+t.queue()+` ON CONFLICT DO NOTHING`); err != nil {
		return fmt.Errorf("enqueue: effects rows: %w", err)
	}
	return tx.Commit()
}
