package prims

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/rwlock"
)

// server is the workloads' protected resource: W8's writes fenced per slot
// key (a fence.MemoryGuard keyed by the slot key, as semaphore/doc.go
// says), W9's reads and writes checked by an rwlock.Guard. Every decision
// is recorded with the bound it was judged by, which the server keeps
// itself (a shadow), so that a stale write admitted with the check
// disabled (the mutation) is still seen. POST /begin is a holder saying it
// starts an operation's work step: the harness pauses or kills holders
// there.
type server struct {
	rec      history.Recorder
	disabled bool
	begins   chan string

	mu     sync.Mutex
	slots  fence.MemoryGuard
	shadow map[string]uint64
	rw     rwlock.Guard
	w, hi  uint64 // W9's shadow: the latest writer's epoch, the highest epoch admitted

	srv *http.Server
	ln  net.Listener
}

func newServer(rec history.Recorder, disabled bool) *server {
	return &server{rec: rec, disabled: disabled, begins: make(chan string, 64), shadow: map[string]uint64{}}
}

func (s *server) start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /begin", func(w http.ResponseWriter, q *http.Request) {
		select {
		case s.begins <- q.URL.Query().Get("h"):
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /sem", s.sem)
	mux.HandleFunc("POST /rw", s.rwCheck)
	s.ln = ln
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

func (s *server) url() string { return "http://" + s.ln.Addr().String() }

func (s *server) close() {
	if s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close()
	}
}

func uintParam(q *http.Request, name string) uint64 {
	v, _ := strconv.ParseUint(q.URL.Query().Get(name), 10, 64)
	return v
}

// reply records the decision and answers 204 (admitted) or 409 (stale).
func (s *server) reply(w http.ResponseWriter, e history.Event, err error) {
	if err != nil {
		e.Kind, e.Err = history.EvFenced, err.Error()
	}
	s.rec.Record(e)
	if err != nil {
		w.WriteHeader(http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// sem is W8's write: fenced by the slot key's highest token.
func (s *server) sem(w http.ResponseWriter, q *http.Request) {
	key, token := q.URL.Query().Get("k"), uintParam(q, "t")
	s.mu.Lock()
	defer s.mu.Unlock()
	e := history.Event{Kind: history.EvAdmit, Key: key, Token: token, Highest: s.shadow[key], Target: q.URL.Query().Get("h"), Req: q.URL.Query().Get("r")}
	var err error
	if !s.disabled {
		err = s.slots.Admit(q.Context(), key, token)
	}
	if err == nil {
		s.shadow[key] = max(s.shadow[key], token)
	}
	s.reply(w, e, err)
}

// rwCheck is W9's read or write: checked by the sequencer.
func (s *server) rwCheck(w http.ResponseWriter, q *http.Request) {
	seq := rwlock.Sequencer{Mode: rwlock.Read, Epoch: uintParam(q, "e"), Token: uintParam(q, "t")}
	if q.URL.Query().Get("m") == "w" {
		seq.Mode = rwlock.Write
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bound := s.w
	if seq.Mode == rwlock.Write {
		bound = s.hi
	}
	e := history.Event{Kind: history.EvAdmit, Key: "rw:" + seq.Mode.String(), Token: seq.Epoch, Highest: bound, Target: q.URL.Query().Get("h"), Req: q.URL.Query().Get("r"), Note: seq.String()}
	var err error
	if !s.disabled {
		err = s.rw.Check(seq)
	}
	if err == nil {
		s.hi = max(s.hi, seq.Epoch)
		if seq.Mode == rwlock.Write {
			s.w = max(s.w, seq.Epoch)
		}
	}
	s.reply(w, e, err)
}
