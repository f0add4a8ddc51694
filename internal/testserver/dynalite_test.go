package testserver

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDynaliteLifecycle(t *testing.T) {
	for _, onDisk := range []bool{false, true} {
		d := NewDynalite(t, DynaliteOptions{OnDisk: onDisk})
		// An unsigned API call is refused: the server checks that a
		// request is signed.
		req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, d.Endpoint()+"/", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
		resp, err := httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "MissingAuthenticationToken") {
			t.Fatalf("an unsigned ListTables got %s %s, want 400 MissingAuthenticationToken", resp.Status, body)
		}
		if err := d.CreateTable(ctxT(t), "made"); err != nil {
			t.Fatal(err)
		}
		if err := d.CreateTable(ctxT(t), "made"); err == nil || !strings.Contains(err.Error(), "ResourceInUse") {
			t.Fatalf("a second CreateTable of the same table: %v, want ResourceInUseException", err)
		}
		// A client that aborts a request mid-body does not kill the server
		// (the launcher of scripts/install/dynalite.sh).
		c, err := net.Dial("tcp", d.Addr())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
		c.Close()
		for range 20 { // the server sees the close a moment later
			time.Sleep(50 * time.Millisecond)
			if err := answersHTTP(ctxT(t), d.Endpoint()+"/"); err != nil || !d.Running() {
				t.Fatalf("after an aborted request: running %v, probe %v; log:\n%s", d.Running(), err, d.Log())
			}
		}
		if onDisk {
			if err := d.Restart(ctxT(t)); err != nil {
				t.Fatalf("restart on disk: %v", err)
			}
		}
		d.Stop()
		if err := answersHTTP(ctxT(t), d.Endpoint()+"/"); err == nil || d.Running() {
			t.Fatalf("after Stop: running %v, probe %v", d.Running(), err)
		}
	}
}
