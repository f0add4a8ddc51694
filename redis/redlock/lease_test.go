package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// downClient is a master that does not answer.
type downClient struct{ lhredis.Client }

var errDown = errors.New("master down")

func (downClient) Cluster() bool { return false }
func (downClient) Addr() string  { return "down:1" }
func (downClient) EvalSha(context.Context, string, []string, []string) (any, error) {
	return nil, errDown
}
func (downClient) Eval(context.Context, string, []string, []string) (any, error) {
	return nil, errDown
}

// A grant taken at MinTTL reports a validity below MinTTL (the drift is
// subtracted), yet renews: Renew checks the TTL it applies on the masters,
// the original request's, not the validity it reported. A TTL the caller
// set is checked as given.
func TestRenewChecksTheAppliedTTL(t *testing.T) {
	s, err := New([]lhredis.Client{downClient{}, downClient{}, downClient{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ttl := s.Info().MinTTL
	g := leasehold.Grant{
		Key: "k", Owner: "o", Token: 7, TTL: ttl - s.drift(ttl),
		Private: &grantState{ttl: ttl, token: 7, h: newHolding([]uint64{7, 7, 0}, []bool{true, true, true})},
	}
	if g.TTL >= s.Info().MinTTL {
		t.Fatalf("validity %s is not below MinTTL %s: the test checks nothing", g.TTL, s.Info().MinTTL)
	}
	var se *leasehold.StoreError
	if _, err := s.Renew(context.Background(), g); !errors.As(err, &se) || se.Op != "renew" {
		t.Errorf("Renew of the grant as Acquire returned it: %v, want the store error of masters that do not answer", err)
	}
	if got := s.applied(g).TTL; got != ttl {
		t.Errorf("applied TTL %s, want the request's %s", got, ttl)
	}
	g.TTL = 0
	if _, err := s.Renew(context.Background(), g); !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Errorf("Renew with a zero TTL: %v, want ErrInvalidTTL", err)
	}
	g.TTL = time.Minute
	if got := s.applied(g).TTL; got != time.Minute {
		t.Errorf("applied TTL %s for a TTL the caller set, want 1m", got)
	}
}
