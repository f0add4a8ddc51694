package s3

import (
	"context"
	"testing"
)

// TestTransportKeepsConnections: the transport of a store opened from a
// URL keeps an idle connection for each of up to maxIdlePerHost requests
// in flight (the SDK's keeps 10 per host; the eleventh request in flight
// at once dialled a connection and dropped it after).
func TestTransportKeepsConnections(t *testing.T) {
	c, err := parseURL("s3://b?endpoint=http://127.0.0.1:1&region=r&access_key=k&secret_key=s")
	if err != nil {
		t.Fatal(err)
	}
	_, tr, err := c.client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tr.MaxIdleConnsPerHost < maxIdlePerHost || tr.MaxIdleConns < maxIdlePerHost {
		t.Fatalf("the transport keeps %d idle connections per host, %d in all; want %d", tr.MaxIdleConnsPerHost, tr.MaxIdleConns, maxIdlePerHost)
	}
}
