package fence

import (
	"context"
	"math"
	"testing"
)

func TestTokenContext(t *testing.T) {
	ctx := context.Background()
	if tok, ok := TokenFrom(ctx); ok || tok != 0 {
		t.Fatalf("TokenFrom(empty) = %d, %v; want 0, false", tok, ok)
	}
	for _, want := range []uint64{0, 1, 42, math.MaxUint64} {
		tok, ok := TokenFrom(WithToken(ctx, want))
		if !ok || tok != want {
			t.Errorf("TokenFrom(WithToken(%d)) = %d, %v", want, tok, ok)
		}
	}
	inner := WithToken(WithToken(ctx, 1), 2)
	if tok, _ := TokenFrom(inner); tok != 2 {
		t.Errorf("the innermost token should win: got %d", tok)
	}
	// A value of another type under a look-alike key is not a token.
	type otherKey struct{}
	if _, ok := TokenFrom(context.WithValue(ctx, otherKey{}, uint64(3))); ok {
		t.Error("TokenFrom found a token under a foreign key")
	}
}
