package main

import (
	"net/http"
	"strconv"

	"github.com/leasehold-go/leasehold/serve"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveCollector exports a server's Metrics at each scrape, from a
// registry of its own (nothing global). Its labels are the fixed sets of
// serve.Metrics: route, HTTP status, error code.
type serveCollector struct {
	srv                                    *serve.Server
	requests, latency, refusals, backendKO *prometheus.Desc
	waits, watches, kept                   *prometheus.Desc
}

func newServeCollector() *serveCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("leasehold_serve_"+name, help, labels, nil)
	}
	return &serveCollector{
		requests:  d("requests_total", "Requests answered, by route (\"other\" for any other path) and HTTP status.", "route", "code"),
		latency:   d("request_duration_seconds", "Time to answer a request, by route (watch streams not included; an acquire's includes its wait).", "route"),
		refusals:  d("refusals_total", "Error answers, by the API's error code (held, not_held, forbidden, over_capacity, ...).", "error_code"),
		backendKO: d("backend_errors_total", "Failures of the store behind the server."),
		waits:     d("acquire_waits", "Acquires waiting now for a held key."),
		watches:   d("watch_streams", "Watch streams open now."),
		kept:      d("kept_grants", "Grants the server keeps now (grants bound to its process)."),
	}
}

// handler returns the /metrics handler of c, once c.srv is set.
func (c *serveCollector) handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// Describe sends the descriptions of c's metrics.
func (c *serveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.latency, c.refusals, c.backendKO, c.waits, c.watches, c.kept} {
		ch <- d
	}
}

// Collect sends c's metrics, read from the server now.
func (c *serveCollector) Collect(ch chan<- prometheus.Metric) {
	if c.srv == nil {
		return
	}
	m := c.srv.Metrics()
	for _, r := range m.Requests {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(r.Count), r.Route, strconv.Itoa(r.Status))
	}
	for _, l := range m.Latency {
		buckets := make(map[float64]uint64, len(l.Buckets))
		for i, n := range l.Buckets {
			buckets[serve.LatencyBuckets[i]] = n
		}
		ch <- prometheus.MustNewConstHistogram(c.latency, l.Count, l.Sum, buckets, l.Route)
	}
	for code, n := range m.Refusals {
		ch <- prometheus.MustNewConstMetric(c.refusals, prometheus.CounterValue, float64(n), code)
	}
	ch <- prometheus.MustNewConstMetric(c.backendKO, prometheus.CounterValue, float64(m.BackendErrors))
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.GaugeValue, float64(m.AcquireWaits))
	ch <- prometheus.MustNewConstMetric(c.watches, prometheus.GaugeValue, float64(m.WatchStreams))
	ch <- prometheus.MustNewConstMetric(c.kept, prometheus.GaugeValue, float64(m.KeptGrants))
}
