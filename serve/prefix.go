package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// MaxPendingKeys bounds the keys a watch by prefix collects for a client
// that has not read them yet; past it the stream forgets them and sends a
// resync event (list the prefix again).
const MaxPendingKeys = 4096

// watchPrefixQuery checks a watch by prefix (GET /v1/watch?prefix=P) and
// serves it: it needs the watch verb on the prefix (on every key for an
// empty one), and takes neither key nor mode.
func (s *Server) watchPrefixQuery(w http.ResponseWriter, r *http.Request, q url.Values) {
	prefix := q.Get("prefix")
	if err := s.authorize(r, VerbWatch, prefix); err != nil {
		writeFailure(w, err, "")
		return
	}
	err := checkPrefix(prefix)
	if q.Has("key") || q.Has("mode") {
		err = badRequest("a watch takes key (with mode) or prefix, not both")
	}
	var done func()
	if err == nil {
		done, err = s.takeWatch()
	}
	if err != nil {
		writeFailure(w, err, "")
		return
	}
	defer done()
	s.watchPrefix(w, r, prefix)
}

// watchPrefix streams server-sent events about every key under prefix:
// `ready` once subscribed, then `change` {"key"} for each key whose holder
// may have changed, and `resync` {"prefix"} when changes were too many to
// keep for a client that did not read them (list the prefix again).
//
// No store watches a prefix natively, so the changes come from two
// sources: the grants and releases through this server (at once), and a
// list of the prefix every Options.PrefixPoll, compared with the one
// before (changes made through other replicas or directly on the store,
// and expiries, up to one period late). A change elsewhere that is undone
// within one period (a key taken and released between two lists) is not
// seen. A backend that cannot list is refused with 501.
func (s *Server) watchPrefix(w http.ResponseWriter, r *http.Request, prefix string) {
	if _, ok := s.store.(leasehold.Lister); !ok {
		writeError(w, http.StatusNotImplemented, wire.CodeNotImplemented,
			fmt.Sprintf("the %s store cannot list holders, so a watch by prefix would miss the changes made elsewhere; watch keys", s.info.Name))
		return
	}
	out, err := s.newSSE(w)
	if err != nil {
		writeFailure(w, err, "")
		return
	}
	sink, unsub := s.local.subscribePrefix(prefix, MaxPendingKeys)
	defer unsub()
	stopPoll, err := s.pollPrefix(r.Context(), prefix)
	if err != nil {
		writeFailure(w, err, "")
		return
	}
	defer stopPoll()
	defer out.end()
	out.start()
	out.event("ready", map[string]string{"prefix": prefix})
	s.pump(r.Context(), out, sink.wake, func() {
		keys, over := sink.take()
		if over {
			out.event("resync", map[string]string{"prefix": prefix})
		}
		for _, k := range keys {
			out.event("change", map[string]string{"key": k})
		}
	})
}

// pollers are the lists of watched prefixes: one per distinct prefix,
// shared by its streams.
type pollers struct {
	mu sync.Mutex
	m  map[string]*poller
}

type poller struct {
	refs int
	stop context.CancelFunc
	done chan struct{}
}

// pollPrefix starts listing prefix every Options.PrefixPoll, if no stream
// does yet: the first list, the baseline, is made before it returns, so a
// change after it is seen. It returns the function that ends this
// stream's share.
func (s *Server) pollPrefix(ctx context.Context, prefix string) (func(), error) {
	s.polls.mu.Lock()
	defer s.polls.mu.Unlock()
	p := s.polls.m[prefix]
	if p == nil {
		hs, err := s.store.(leasehold.Lister).List(ctx, prefix)
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithCancel(s.ctx)
		p = &poller{stop: cancel, done: make(chan struct{})}
		s.polls.m[prefix] = p
		go s.pollLoop(pctx, prefix, tokensOf(hs), p.done)
	}
	p.refs++
	return func() {
		s.polls.mu.Lock()
		p.refs--
		last := p.refs == 0
		if last {
			delete(s.polls.m, prefix)
			p.stop()
		}
		s.polls.mu.Unlock()
		if last {
			<-p.done
		}
	}, nil
}

func (s *Server) pollLoop(ctx context.Context, prefix string, prev map[string]uint64, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(s.opts.PrefixPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hs, err := s.store.(leasehold.Lister).List(ctx, prefix)
		if err != nil {
			if ctx.Err() == nil {
				s.counters.backendError()
			}
			continue // the next list compares with the last one that worked
		}
		cur := tokensOf(hs)
		for k, tok := range cur {
			if prev[k] != tok {
				s.local.touchedUnder(prefix, k)
			}
		}
		for k := range prev {
			if _, ok := cur[k]; !ok {
				s.local.touchedUnder(prefix, k)
			}
		}
		prev = cur
	}
}

func tokensOf(hs []leasehold.Holder) map[string]uint64 {
	m := make(map[string]uint64, len(hs))
	for _, h := range hs {
		m[h.Key] = h.Token
	}
	return m
}
