package serve

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// The default caps of Options.
const (
	// DefaultMaxWatches is Options.MaxWatches's default.
	DefaultMaxWatches = 10_000
	// DefaultMaxWaits is Options.MaxWaits's default.
	DefaultMaxWaits = 10_000
)

// takeWatch takes one of Options.MaxWatches places of a watch stream.
func (s *Server) takeWatch() (func(), error) {
	return s.watches.take(s.opts.MaxWatches, "watch streams open", "MaxWatches", "--max-watches")
}

// gauge counts what is open of something the server caps.
type gauge struct {
	n atomic.Int64
}

// take takes one of max places, and returns the function that gives it
// back (call it once); or it returns the 503 over_capacity refusal
// naming the cap, its option and its flag.
func (g *gauge) take(max int, what, option, flag string) (func(), error) {
	if n := g.n.Add(1); n > int64(max) {
		g.n.Add(-1)
		return nil, &requestError{http.StatusServiceUnavailable, wire.CodeOverCapacity,
			fmt.Sprintf("the server has %d %s, its maximum (Options.%s, leasehold serve %s); try again later", max, what, option, flag)}
	}
	return func() { g.n.Add(-1) }, nil
}

// load returns how many places are taken.
func (g *gauge) load() int64 { return g.n.Load() }
