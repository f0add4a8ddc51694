package bench

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkHTTPFloor measures the floor under a request through the
// server: a bare HTTP/1.1 POST of an acquire's JSON body and its JSON
// answer on a kept-alive loopback connection, net/http on both sides in
// this process, with no lease and no store. It reports the time and this
// process's CPU time (client and server) per request; a cycle through the
// server makes two.
func BenchmarkHTTPFloor(b *testing.B) {
	answer := []byte(`{"key":"bench/floor","token":1,"ttl_ms":30000}`)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	defer hs.Close()
	c := hs.Client()
	body := []byte(`{"key":"bench/floor","owner":"0123456789abcdef0123456789abcdef","label":"bench","ttl_ms":30000}`)
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	for range b.N {
		resp, err := c.Post(hs.URL+"/v1/acquire", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	elapsed, cpu := time.Since(t0), cpuTime()-cpu0
	b.StopTimer()
	b.ReportMetric(float64(elapsed.Microseconds())/float64(b.N), "µs/req")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
}
