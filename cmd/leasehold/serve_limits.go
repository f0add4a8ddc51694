package main

import (
	"flag"
	"net/http"
	"time"

	"github.com/leasehold-go/leasehold/serve"
)

// maxHeaderBytes bounds a request's header lines; a longer header is
// answered 431 by net/http. The API's requests carry a bearer token and a
// few short headers.
const maxHeaderBytes = 64 << 10

// serveLimits are serve's caps and timeouts.
type serveLimits struct {
	maxWatches, maxWaits *int
	idle                 *time.Duration
}

func limitFlags(fs *flag.FlagSet) serveLimits {
	return serveLimits{
		maxWatches: fs.Int("max-watches", serve.DefaultMaxWatches, "the most watch streams open at once; more are refused with 503"),
		maxWaits:   fs.Int("max-waits", serve.DefaultMaxWaits, "the most acquires waiting at once for a held key; more are refused with 503"),
		idle:       durationFlag(fs, "idle-timeout", 2*time.Minute, "close a kept-alive connection idle this long"),
	}
}

// check refuses caps and timeouts that are not positive.
func (l serveLimits) check() error {
	switch {
	case *l.maxWatches <= 0:
		return usagef("--max-watches %d: give a positive number", *l.maxWatches)
	case *l.maxWaits <= 0:
		return usagef("--max-waits %d: give a positive number", *l.maxWaits)
	case *l.idle <= 0:
		return usagef("--idle-timeout %s: give a positive duration", *l.idle)
	}
	return nil
}

// apply sets the caps in o.
func (l serveLimits) apply(o *serve.Options) {
	o.MaxWatches, o.MaxWaits = *l.maxWatches, *l.maxWaits
}

// httpServer returns the http.Server of leasehold serve: headers must
// arrive within 10 s and fit in maxHeaderBytes; an idle kept-alive
// connection is closed after --idle-timeout. It sets no read or write
// timeout of the whole request: watch streams and waiting acquires last;
// the handler bounds a body's time (Options.BodyTimeout) and each write
// of a stream (Options.StreamWriteTimeout).
func (l serveLimits) httpServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: *l.idle, MaxHeaderBytes: maxHeaderBytes}
}
