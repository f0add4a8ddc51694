package serve

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// query reads r's query: only the names in allowed, each at most once. The
// error is a *requestError naming the problem.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("malformed query: %v", err)
	}
	for name, vs := range q {
		known := false
		for _, a := range allowed {
			known = known || a == name
		}
		switch {
		case !known:
			return nil, badRequest("unknown query parameter %q; this endpoint takes %v", name, allowed)
		case len(vs) > 1:
			return nil, badRequest("query parameter %q is given %d times", name, len(vs))
		}
	}
	return q, nil
}

func (s *Server) holder() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, err := query(r, "key")
		if err != nil {
			writeFailure(w, err, "")
			return
		}
		key := q.Get("key")
		if err := s.authorize(r, VerbRead, key); err != nil {
			writeFailure(w, err, "")
			return
		}
		if err := leasehold.CheckHolder(key); err != nil {
			writeFailure(w, err, "")
			return
		}
		h, err := s.store.Holder(r.Context(), key)
		if err != nil {
			writeFailure(w, err, "")
			return
		}
		writeJSON(w, http.StatusOK, wire.FromHolder(h))
	}
}

func (s *Server) list() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, err := query(r, "prefix")
		if err != nil {
			writeFailure(w, err, "")
			return
		}
		if err := s.authorize(r, VerbRead, q.Get("prefix")); err != nil {
			writeFailure(w, err, "")
			return
		}
		l, ok := s.store.(leasehold.Lister)
		if !ok {
			writeError(w, http.StatusNotImplemented, wire.CodeNotImplemented, fmt.Sprintf("the %s store cannot list holders", s.info.Name))
			return
		}
		prefix := q.Get("prefix")
		if err := checkPrefix(prefix); err != nil {
			writeFailure(w, err, "")
			return
		}
		hs, err := l.List(r.Context(), prefix)
		if err != nil {
			writeFailure(w, err, "")
			return
		}
		out := wire.List{Holders: make([]wire.Holder, 0, len(hs))}
		for _, h := range hs {
			out.Holders = append(out.Holders, wire.FromHolder(h))
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// checkPrefix refuses a prefix that is not empty and not a valid key.
func checkPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return leasehold.ValidateKey(prefix)
}

func (s *Server) infoHandler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.authorizeAnywhere(r, VerbRead); err != nil {
			writeFailure(w, err, "")
			return
		}
		writeJSON(w, http.StatusOK, wire.FromInfo(s.info, s.capabilities()))
	}
}

// watch streams server-sent events about one key: `ready` once the
// subscription is established (nothing after it is missed), then `change`
// whenever the key may have changed (mode=notify: it may be free; mode=watch:
// its holder changed). A comment line every Heartbeat notices a client that
// went away. The stream ends when the client goes or the server closes.
// With prefix instead of key, it is a watch by prefix (see watchPrefix).
func (s *Server) watch() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, err := query(r, "key", "mode", "prefix")
		if err != nil {
			writeFailure(w, err, "")
			return
		}
		if q.Has("prefix") {
			s.watchPrefixQuery(w, r, q)
			return
		}
		key, mode := q.Get("key"), q.Get("mode")
		if err := s.authorize(r, VerbWatch, key); err != nil {
			writeFailure(w, err, "")
			return
		}
		if err := leasehold.CheckHolder(key); err != nil {
			writeFailure(w, err, "")
			return
		}
		if mode != "" && mode != "notify" && mode != "watch" {
			writeFailure(w, badRequest("mode %q is neither notify nor watch", mode), "")
			return
		}
		if mode == "watch" && !s.capabilities().Watch {
			writeError(w, http.StatusNotImplemented, wire.CodeNotImplemented, fmt.Sprintf("the %s store has no native watch; use mode=notify", s.info.Name))
			return
		}
		done, err := s.takeWatch()
		if err != nil {
			writeFailure(w, err, "")
			return
		}
		defer done()
		s.stream(w, r, key, mode == "watch")
	}
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, key string, changes bool) {
	out, err := s.newSSE(w)
	if err != nil {
		writeFailure(w, err, "")
		return
	}
	sig, stop, err := s.signals(r.Context(), key, changes)
	if err != nil {
		writeFailure(w, err, "")
		return
	}
	defer stop()
	defer out.end()
	out.start()
	data := map[string]string{"key": key}
	out.event("ready", data)
	s.pump(r.Context(), out, sig, func() { out.event("change", data) })
}
