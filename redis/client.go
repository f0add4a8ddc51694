package redis

import "context"

// Client is what the store needs from a Redis client library. The goredis
// and rueidis packages implement it over github.com/redis/go-redis/v9 and
// github.com/redis/rueidis; this package itself depends on no client.
//
// Replies come back as generic values: int64 for integers, string for bulk
// and simple strings, []any for arrays and nil for a nil reply. A Redis error
// reply is returned as an error whose text starts with the Redis error code
// ("NOSCRIPT ...", "READONLY ..."), as both libraries do.
type Client interface {
	// EvalSha runs EVALSHA sha with keys and args.
	EvalSha(ctx context.Context, sha string, keys, args []string) (any, error)
	// Eval runs EVAL script with keys and args (which also caches the
	// script on the server).
	Eval(ctx context.Context, script string, keys, args []string) (any, error)
	// Listen opens a pub/sub connection whose messages are reported to
	// deliver with their channel. deliver must not block for long.
	Listen(ctx context.Context, deliver func(channel string)) (Subscription, error)
	// Addr names the server or servers, for error messages.
	Addr() string
	// Cluster reports whether keys may live on different nodes (Redis
	// Cluster), so that multi-key calls must be split by hash slot.
	Cluster() bool
	// Close closes the client. A store calls it only when the store owns
	// the client (Options.CloseClient).
	Close() error
}

// Subscription is one pub/sub connection opened by Client.Listen.
type Subscription interface {
	// Subscribe subscribes to channel and returns once the server has
	// confirmed it.
	Subscribe(ctx context.Context, channel string) error
	// Unsubscribe unsubscribes from channel.
	Unsubscribe(ctx context.Context, channel string) error
	// Done is closed when the connection is lost or closed; messages
	// published after that are not delivered. The store then wakes every
	// waiter and opens a new connection for the next one.
	Done() <-chan struct{}
	// Close closes the connection and closes Done. It may be called more
	// than once.
	Close() error
}
