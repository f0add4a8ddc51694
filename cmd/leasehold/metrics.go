package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	lhotel "github.com/leasehold-go/leasehold/otel"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// metricsFlag defines --metrics-addr.
func metricsFlag(fs *flag.FlagSet) *string {
	return fs.String("metrics-addr", "", "serve Prometheus metrics on this address at /metrics (host:port; default: none)")
}

// withMetrics runs body, serving the client's metrics on f.metricsAddr
// while it runs when that is set: it listens first, so that an address
// that cannot be had (already in use) is a usage error (exit 2) before
// anything else starts, then hands body the observer in f.observer.
func (a *app) withMetrics(f runFlags, body func(runFlags) int) int {
	if f.metricsAddr == "" {
		return body(f)
	}
	m, err := serveMetrics(f.metricsAddr, f.key)
	if err != nil {
		return a.fail(f.name, err)
	}
	fmt.Fprintf(a.stderr, "leasehold %s: serving metrics on http://%s/metrics\n", f.name, m.ln.Addr())
	f.observer = m.obs
	defer func() {
		if err := m.close(); err != nil {
			fmt.Fprintf(a.stderr, "leasehold %s: warning: the metrics server on %s failed: %v\n", f.name, f.metricsAddr, err)
		}
	}()
	return body(f)
}

// metricsServer serves one client's metrics in Prometheus's text format,
// from a registry of its own (nothing global).
type metricsServer struct {
	obs    *lhotel.Observer
	ln     net.Listener
	srv    *http.Server
	mp     *sdkmetric.MeterProvider
	served chan error
}

// serveMetrics listens on addr and serves /metrics there. Every leasehold
// series carries the label leasehold_key="key": the process holds that one
// key, so the label costs no series, and the alerts of docs/alerts.yml can
// tell keys apart across processes.
func serveMetrics(addr, key string) (*metricsServer, error) {
	reg := prometheus.NewRegistry()
	exp, err := promexporter.New(promexporter.WithRegisterer(prometheus.WrapRegistererWith(prometheus.Labels{"leasehold_key": key}, reg)),
		promexporter.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
		promexporter.WithoutTargetInfo(), promexporter.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("the metrics exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	obs, err := lhotel.New(lhotel.Options{MeterProvider: mp, TracerProvider: tracenoop.NewTracerProvider()})
	if err != nil {
		return nil, fmt.Errorf("the metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err // "bind: address already in use"
		}
		return nil, usagef("--metrics-addr %s: cannot serve metrics there: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	m := &metricsServer{obs: obs, ln: ln, mp: mp, served: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { m.served <- m.srv.Serve(ln) }()
	return m, nil
}

// close stops serving, closes the observer and the meter provider, and
// returns the error that ended serving early, if one did.
func (m *metricsServer) close() error {
	err := m.srv.Close()
	if served := <-m.served; !errors.Is(served, http.ErrServerClosed) {
		err = served
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return errors.Join(err, m.obs.Close(), m.mp.Shutdown(ctx))
}
