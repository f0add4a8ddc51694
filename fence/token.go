package fence

import "context"

// tokenKey is the context key for a fencing token.
type tokenKey struct{}

// WithToken returns a copy of ctx that carries the fencing token. A lease's
// context carries its grant's token this way, and [Middleware] stores the
// token of an admitted request in the request's context.
func WithToken(ctx context.Context, token uint64) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// TokenFrom returns the fencing token carried by ctx and whether there is one.
func TokenFrom(ctx context.Context) (uint64, bool) {
	token, ok := ctx.Value(tokenKey{}).(uint64)
	return token, ok
}
