package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// FuzzNextEvent reads any byte stream as server-sent events: no panic, no
// event name holding a line break (a lone CR ends a line too: the seed
// event:\r0 once gave the name "\r0"), every line is bounded, and the
// events of a well-formed stream come out in order, whatever its line ends.
func FuzzNextEvent(f *testing.F) {
	f.Add([]byte("event: ready\ndata: {}\n\n:\n\nevent: change\ndata: {}\n\n"), "change")
	f.Add([]byte("data: x\r\n\r\n"), "ready")
	f.Add([]byte(strings.Repeat("x", 5000)+"\n\n"), "change")
	f.Add([]byte("event:change\n"), "x")
	f.Add([]byte("event:\r0\n\n"), "0")
	f.Add([]byte("event: a\rdata: 1\r\revent: b\r\ndata: 2\n\n"), "b")
	f.Fuzz(func(t *testing.T, stream []byte, name string) {
		r := newEventReader(bytes.NewReader(stream))
		for range 1000 {
			ev, err := r.next()
			if err != nil {
				break
			}
			if strings.ContainsAny(ev, "\r\n") || ev == "" {
				t.Fatalf("event name %q", ev)
			}
		}
		if name == "" || strings.ContainsAny(name, "\r\n") || strings.HasPrefix(name, " ") {
			return
		}
		good := ":\n\nevent: ready\rdata: {}\n\nevent: " + name + "\r\ndata: {}\r\n\r\n"
		r = newEventReader(strings.NewReader(good))
		first, err1 := r.next()
		second, err2 := r.next()
		if len(good) < maxEventLine && (first != "ready" || second != name || err1 != nil || err2 != nil) {
			t.Fatalf("%q read as %q (%v), %q (%v)", good, first, err1, second, err2)
		}
	})
}

// FuzzRefusal maps any error answer: no panic, a non-nil error that never
// claims the grant is held by the caller, and a documented code maps to
// its sentinel.
func FuzzRefusal(f *testing.F) {
	f.Add(404, []byte(`{"error":{"code":"not_held","message":"x"}}`))
	f.Add(409, []byte(`{"error":{"code":"held","message":"x","holder":{"key":"k","token":"3","remaining_ms":5}}}`))
	f.Add(409, []byte(`{"error":{"code":"held","message":"x"}}`))
	f.Add(409, []byte(`{"error":{"code":"tokens_exhausted","message":"x"}}`))
	f.Add(502, []byte(`<html>bad gateway</html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		s := &Store{info: leasehold.Info{Name: "remote(test)"}}
		err := s.refusal("renew", status, body)
		if err == nil || err.Error() == "" {
			t.Fatalf("%d %q: no error", status, body)
		}
		var we wire.Error
		if json.Unmarshal(body, &we) != nil || we.Error.Code == "" {
			if !errors.Is(err, leasehold.ErrStore) {
				t.Fatalf("%d %q: a non-JSON answer gave %v, want a StoreError", status, body, err)
			}
			return
		}
		want := map[string]error{wire.CodeHeld: leasehold.ErrHeld, wire.CodeNotHeld: leasehold.ErrNotHeld,
			wire.CodeInvalidKey: leasehold.ErrInvalidKey, wire.CodeInvalidTTL: leasehold.ErrInvalidTTL,
			wire.CodeInvalidWait: leasehold.ErrInvalidWait, wire.CodeTokensExhausted: leasehold.ErrTokensExhausted,
			wire.CodeForeignRecord: leasehold.ErrForeignRecord}[we.Error.Code]
		if want == nil {
			want = leasehold.ErrStore
		}
		if !errors.Is(err, want) {
			t.Fatalf("%d %q: %v does not match %v", status, body, err, want)
		}
	})
}
