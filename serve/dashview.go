package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// dashboardPoll is the period at which a dashboard stream lists its
// prefix again: changes made through this server wake it at once, the
// others (an expiry, another replica's grants, the store's own clients)
// show within this period.
const dashboardPoll = time.Second

// dashThrottle is the least time between two events of a stream.
const dashThrottle = 100 * time.Millisecond

// dashRow is one lease of the dashboard.
type dashRow struct {
	Key         string `json:"key"`
	Label       string `json:"label"`
	Token       uint64 `json:"token,string"`
	RemainingMs int64  `json:"remaining_ms"`
	Waiters     int    `json:"waiters"`    // acquires the server holds open for the key
	Contention  uint64 `json:"contention"` // acquires refused since the server started
	Breakable   bool   `json:"breakable"`  // the viewer has admin on the key
}

// dashEvent is the data of a dashboard stream's `leases` event.
type dashEvent struct {
	Leases []dashRow `json:"leases"`
	More   int       `json:"more"`
}

// rows turns holders into the dashboard's rows for rl.
func (s *Server) rows(rl rule, hs []leasehold.Holder) ([]dashRow, int, error) {
	slices.SortFunc(hs, func(a, b leasehold.Holder) int { return strings.Compare(a.Key, b.Key) })
	more := max(0, len(hs)-maxRows)
	hs = hs[:len(hs)-more]
	rows := make([]dashRow, 0, len(hs))
	for _, h := range hs {
		waiters, contention := s.stats.of(h.Key)
		remaining := h.Remaining
		if remaining == 0 {
			remaining = h.MaxRemaining
		}
		rows = append(rows, dashRow{Key: h.Key, Label: h.Label, Token: h.Token, RemainingMs: wire.MsFloor(remaining),
			Waiters: waiters, Contention: contention, Breakable: rl.name != "" && rl.allows(VerbAdmin, h.Key)})
	}
	return rows, more, nil
}

// withRule returns r's context with rl as its caller's rule.
func withRule(r *http.Request, rl rule) context.Context {
	return context.WithValue(r.Context(), ruleKey{}, rl)
}

// dashboardEvents streams the dashboard's leases under ?prefix= as
// server-sent events: `leases` with a dashEvent, at once, then on each
// change made through the server and every dashboardPoll (see there). It
// needs the read and watch verbs on the prefix.
func (s *Server) dashboardEvents() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rl, ok := s.viewer(r)
		if !ok {
			writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "sign in to the dashboard with a token first")
			return
		}
		q, err := query(r, "prefix")
		if err != nil {
			writeFailure(w, err, "")
			return
		}
		prefix := q.Get("prefix")
		for _, verb := range []string{VerbRead, VerbWatch} {
			if !rl.allows(verb, prefix) {
				writeError(w, http.StatusForbidden, wire.CodeForbidden, fmt.Sprintf("%s may not %s %q", rl.name, verb, prefix))
				return
			}
		}
		if _, _, err := s.snapshot(r, rl, prefix); err != nil {
			writeFailure(w, err, "")
			return
		}
		s.dashStream(w, r, rl, prefix)
	}
}

func (s *Server) dashStream(w http.ResponseWriter, r *http.Request, rl rule, prefix string) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, wire.CodeUnavailable, "this connection cannot stream")
		return
	}
	sig, stop := s.stats.subscribe()
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	tick := time.NewTicker(dashboardPoll)
	defer tick.Stop()
	var last []byte
	for {
		rows, more, err := s.snapshot(r, rl, prefix)
		var data []byte
		if err == nil {
			data, _ = json.Marshal(dashEvent{Leases: rows, More: more})
		} else {
			_, body := failure(err)
			data, _ = json.Marshal(body)
		}
		event := "event: leases\ndata: " + string(data) + "\n\n"
		switch {
		case err != nil:
			event = "event: failure\ndata: " + string(data) + "\n\n"
		case bytes.Equal(data, last):
			event = ":\n\n" // nothing new; notices a client that went away
		}
		if _, werr := fmt.Fprint(w, event); werr != nil {
			return
		}
		flusher.Flush()
		last = data
		pause := time.NewTimer(dashThrottle)
		select {
		case <-r.Context().Done():
		case <-s.ctx.Done():
		case <-pause.C:
		}
		pause.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-sig:
		case <-tick.C:
		}
	}
}
