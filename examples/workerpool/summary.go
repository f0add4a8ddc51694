package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// summary is what a run did, read from the database (the effects, the
// queue) and from the workers' event lines (what each layer absorbed).
type summary struct {
	Layers   layers
	Messages int // distinct msg_ids enqueued
	Rows     int // queue rows (a message enqueued twice is two rows)

	Once    int // messages whose effect was applied exactly once
	Missing int // messages whose effect was never applied
	Doubled int // messages whose effect was applied more than once
	Unacked int // rows never acked

	Deliveries int // claims of rows, in all

	// Outcomes counts the workers' outcomes by kind: processed (the effect
	// made), dedupe (a done message acked without the work), lease (the
	// lease not obtained within the visibility window: handed back), fence
	// (a stale write refused: handed back), error (anything else: handed
	// back).
	Outcomes    map[string]int
	StaleLanded int // writes of paused workers that landed (0 with the fence)
	// Stalled is what became of each paused worker's write, by the
	// outcome kinds above ("fence": refused by the fence, what the README
	// promises with every layer on).
	Stalled []string

	Kills   int
	Pauses  int
	Workers int // worker processes started, replacements included
	Elapsed time.Duration
}

// Redeliveries counts the claims of rows beyond their first.
func (s summary) Redeliveries() int { return s.Deliveries - (s.Rows - s.Unacked) }

// summarize reads the run's outcome from the database.
func (t tables) summarize(ctx context.Context, db *sql.DB) (summary, error) {
	var s summary
	err := db.QueryRowContext(ctx, `SELECT count(DISTINCT msg_id), count(*), coalesce(sum(delivered), 0),
		count(*) FILTER (WHERE NOT acked) FROM `+t.queue()).Scan(&s.Messages, &s.Rows, &s.Deliveries, &s.Unacked)
	if err != nil {
		return s, fmt.Errorf("summary: %w", err)
	}
	// Every msg_id of the queue is counted, with or without its effects row.
	err = db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE coalesce(e.applied, 0) = 1),
		count(*) FILTER (WHERE coalesce(e.applied, 0) = 0), count(*) FILTER (WHERE e.applied > 1)
		FROM (SELECT DISTINCT msg_id FROM `+t.queue()+`) q LEFT JOIN `+t.effects()+` e USING (msg_id)`).
		Scan(&s.Once, &s.Missing, &s.Doubled)
	if err != nil {
		return s, fmt.Errorf("summary: %w", err)
	}
	return s, nil
}

// check is the verdict: every message's effect applied exactly once and
// every row acked, and, with the fence on, every paused worker's write
// refused by the fence (not ended by a timeout or another error, which
// would leave the fence untested).
func (s summary) check() error {
	if s.Once != s.Messages || s.Missing != 0 || s.Doubled != 0 || s.Unacked != 0 || s.Messages == 0 {
		return fmt.Errorf("not exactly once: %d of %d messages applied once, %d missing, %d applied more than once, %d rows not acked",
			s.Once, s.Messages, s.Missing, s.Doubled, s.Unacked)
	}
	if s.Layers.Fence {
		for i, o := range s.Stalled {
			if o != "fence" {
				return fmt.Errorf("paused write %d of %d ended as %q, not refused by the fence", i+1, len(s.Stalled), o)
			}
		}
	}
	return nil
}

// String is the run's one summary line.
func (s summary) String() string {
	verdict := "OK exactly once"
	if err := s.check(); err != nil {
		verdict = "FAIL " + err.Error()
	}
	o := s.Outcomes
	return fmt.Sprintf("workerpool: %s: %d of %d messages applied once (%d rows, %d duplicates; %d missing, %d doubled, %d rows unacked)"+
		" | deliveries %d, redeliveries %d"+
		" | absorbed: lease %d hand-backs, dedupe %d hits, fence %d rejections; %d other hand-backs; %d stale writes landed"+
		" | faults: %d kills, %d pauses, %d workers started | layers %s | %s",
		verdict, s.Once, s.Messages, s.Rows, s.Rows-s.Messages, s.Missing, s.Doubled, s.Unacked,
		s.Deliveries, s.Redeliveries(),
		o["lease"], o["dedupe"], o["fence"], o["error"], s.StaleLanded,
		s.Kills, s.Pauses, s.Workers, s.Layers, s.Elapsed.Round(100*time.Millisecond))
}
