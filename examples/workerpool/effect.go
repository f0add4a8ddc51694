package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasehold-go/leasehold/dedupe"
)

// applyEffect makes the message's effect, in one transaction:
//
//  1. layer 1, the fence: fence.Table.Check records token as the effects
//     row's fence unless a higher token has written it, and fails with
//     fence.ErrStale otherwise (a holder whose lease ended, paused past its
//     TTL, cannot write after the holder that replaced it);
//  2. layer 2, the dedupe mark: dedupe.Table.Mark inserts the msg_id into
//     the processed table, and a msg_id already there rolls the transaction
//     back with dedupe.ErrDuplicate (the work was done by an earlier
//     delivery);
//  3. the effect itself: applied + 1.
//
// The three commit together or not at all, so a worker killed at any point
// leaves either the whole effect and its mark or neither: the redelivery
// finds the message done, or does it. The fence check comes first so that
// a stale write is refused by the fence even when the mark would also
// refuse it (here both live in one database; the fence is what protects an
// effect that cannot share a transaction with the mark).
func applyEffect(ctx context.Context, db *sql.DB, t tables, on layers, d delivery, token uint64, worker string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("effect of %s: %w", d.MsgID, err)
	}
	defer func() { _ = tx.Rollback() }()
	if on.Fence {
		if err := t.effectFence().Check(ctx, tx, d.MsgID, token); err != nil {
			return err // fence.ErrStale when a newer holder has written
		}
	}
	if on.Dedupe {
		first, err := t.processed().Mark(ctx, tx, d.MsgID)
		if err != nil {
			return err
		}
		if !first {
			return dedupe.ErrDuplicate
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+t.effects()+`
		SET applied = applied + 1, total = total + $2, last_worker = $3 WHERE msg_id = $1`,
		d.MsgID, d.Payload, worker); err != nil {
		return fmt.Errorf("effect of %s: %w", d.MsgID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("effect of %s: commit: %w", d.MsgID, err)
	}
	return nil
}
