package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/memory"
)

// fenceChecker is the method the store Open returns has for fence checks.
type fenceChecker interface {
	CheckFence(ctx context.Context, key string, token uint64) (bool, uint64, error)
}

// TestCheckFence: through the store Open returns, the current grant's
// token is current, an older one is not after a new grant, a released
// key has no current token, and an invalid key is refused before asking.
func TestCheckFence(t *testing.T) {
	ctx := context.Background()
	st := servetest.Start(t, memory.New(nil)).Open(t)
	fc, ok := st.(fenceChecker)
	if !ok {
		t.Fatalf("%T has no CheckFence", st)
	}
	g, err := st.Acquire(ctx, acquireReq("jobs/f"))
	if err != nil {
		t.Fatal(err)
	}
	if cur, tok, err := fc.CheckFence(ctx, "jobs/f", g.Token); err != nil || !cur || tok != g.Token {
		t.Errorf("the current grant: %v %d %v, want current %d", cur, tok, err, g.Token)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Fatal(err)
	}
	if cur, tok, err := fc.CheckFence(ctx, "jobs/f", g.Token); err != nil || cur || tok != 0 {
		t.Errorf("a released key: %v %d %v, want not current, token 0", cur, tok, err)
	}
	req := acquireReq("jobs/f")
	req.Owner += "2"
	g2, err := st.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if cur, tok, err := fc.CheckFence(ctx, "jobs/f", g.Token); err != nil || cur || tok != g2.Token {
		t.Errorf("the older token after a new grant: %v %d %v, want not current, token %d", cur, tok, err, g2.Token)
	}
	if _, _, err := fc.CheckFence(ctx, "", 1); !errors.Is(err, leasehold.ErrInvalidKey) {
		t.Errorf("an empty key: %v, want ErrInvalidKey", err)
	}
}
