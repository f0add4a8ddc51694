package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// httpClient is a client that keeps no connections (and so no goroutines)
// once a call returns.
func httpClient() *http.Client {
	return &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// WaitHealthy waits until every member that was started and not stopped on
// purpose reports healthy on /health: it has a leader and answers reads. A
// member that crashed is an error.
func (c *Etcd) WaitHealthy(ctx context.Context) error {
	hc := httpClient()
	for i, n := range c.Nodes {
		n.mu.Lock()
		skip := n.down || n.state == "new"
		n.mu.Unlock()
		if skip {
			continue
		}
		for {
			if !c.Running(i) {
				return fmt.Errorf("testserver: etcd %s exited: %w", n.Name, ErrExited)
			}
			body, err := httpDo(ctx, hc, http.MethodGet, n.ClientURL+"/health", nil)
			if err == nil && strings.Contains(string(body), `"health":"true"`) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("testserver: etcd %s not healthy: %w (last error %v, answer %s)", n.Name, ctx.Err(), err, body)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// Leader returns the index of the current leader among the running
// members, asking each for its status (etcd's JSON gateway).
func (c *Etcd) Leader(ctx context.Context) (int, error) {
	hc := httpClient()
	for {
		for i, n := range c.Nodes {
			if !c.Running(i) {
				continue
			}
			body, err := httpDo(ctx, hc, http.MethodPost, n.ClientURL+"/v3/maintenance/status", []byte("{}"))
			if err != nil {
				continue
			}
			var st struct {
				Header struct {
					MemberID string `json:"member_id"`
				} `json:"header"`
				Leader string `json:"leader"`
			}
			if json.Unmarshal(body, &st) == nil && st.Leader != "" && st.Leader != "0" && st.Leader == st.Header.MemberID {
				return i, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("testserver: etcd has no leader: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// httpDo makes one request and returns the body of a 200 answer.
func httpDo(ctx context.Context, hc *http.Client, method, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	return b, err
}
