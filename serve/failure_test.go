package serve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// leakyStore fails every acquire with a store error that quotes the
// owner id, as a careless driver's message might.
type leakyStore struct{ *memory.Store }

func (s leakyStore) Acquire(_ context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return leasehold.Grant{}, &leasehold.StoreError{Store: "leaky", Op: "acquire",
		Err: errors.New("connection refused while writing owner " + req.Owner)}
}

// TestStoreFailure: a store that fails gives 503 store_unavailable with
// the store's error, the owner id cut out of it; a closed store too.
func TestStoreFailure(t *testing.T) {
	st := memory.New(nil)
	s := New(leakyStore{st}, nil)
	defer s.Close()
	w := do(t, s, "POST", "/v1/acquire", `{"key":"k","owner":"`+owner+`-owner-01234567","ttl_ms":1000}`)
	e := errorOf(t, w)
	if w.Code != http.StatusServiceUnavailable || e.Code != wire.CodeUnavailable || !strings.Contains(e.Message, "connection refused while writing owner <owner>") {
		t.Errorf("failing store: %d %+v, want 503 with the store's error", w.Code, e)
	}
	if strings.Contains(w.Body.String(), owner) {
		t.Errorf("the answer shows the owner id: %s", w.Body)
	}
	_ = st.Close()
	s2 := New(st, nil)
	defer s2.Close()
	w = do(t, s2, "GET", "/v1/holder?key=k", "")
	if e := errorOf(t, w); w.Code != http.StatusServiceUnavailable || !strings.Contains(e.Message, "closed") {
		t.Errorf("closed store: %d %+v, want 503 saying it is closed", w.Code, e)
	}
}
