package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/storeurl"
)

// logLevels are the values of $LEASEHOLD_LOG.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
}

// setupLogging reads $LEASEHOLD_LOG (the value env gives) and routes the
// logs of leasehold and of the store drivers: unset or "off", the drivers'
// own lines are dropped (the store's error already says what failed);
// debug, info, warn or error, they go to w as slog text lines at that
// level, with the lease events (SlogObserver: grants and releases at debug,
// failed renewals at warn, losses at error). It sets the process-wide
// loggers (slog's default, the store client libraries' through
// storeurl.RouteClientLogs), which only main may do, and returns
// the logger, nil when off.
func setupLogging(env string, w io.Writer) (*slog.Logger, error) {
	value := strings.ToLower(strings.TrimSpace(env))
	if value == "" || value == "off" {
		slog.SetDefault(slog.New(slog.DiscardHandler))
		storeurl.RouteClientLogs(nil)
		return nil, nil
	}
	level, ok := logLevels[value]
	if !ok {
		slog.SetDefault(slog.New(slog.DiscardHandler))
		storeurl.RouteClientLogs(nil)
		return nil, fmt.Errorf("LEASEHOLD_LOG=%q: want debug, info, warn, error or off", env)
	}
	l := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(l)
	storeurl.RouteClientLogs(l)
	return l, nil
}

// observer is the lease client's observer: the log's ($LEASEHOLD_LOG)
// and more (the metrics'), whichever are set; nil when none is.
func (a *app) observer(more leasehold.Observer) leasehold.Observer {
	var log leasehold.Observer
	if a.log != nil {
		log = leasehold.SlogObserver(a.log)
	}
	switch {
	case log == nil:
		return more
	case more == nil:
		return log
	}
	return leasehold.ObserverFunc(func(e leasehold.Event) {
		log.Observe(e)
		more.Observe(e)
	})
}
