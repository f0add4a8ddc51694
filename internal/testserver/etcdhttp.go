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

// etcdStatus is the part of a member's status the helpers read.
type etcdStatus struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader string `json:"leader"` // "0" or "" when it has none
}

// status asks member i for its status (etcd's JSON gateway) and notes its
// member ID.
func (c *Etcd) status(ctx context.Context, hc *http.Client, i int) (etcdStatus, error) {
	n := c.Nodes[i]
	var st etcdStatus
	body, err := httpDo(ctx, hc, http.MethodPost, n.ClientURL+"/v3/maintenance/status", []byte("{}"))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("etcd %s status %s: %w", n.Name, body, err)
	}
	n.mu.Lock()
	n.id = st.Header.MemberID
	n.mu.Unlock()
	return st, nil
}

// LeaderSeen returns the index of the member that member i follows as its
// leader (i itself when it leads), or -1 when it has none; an error when
// i does not answer, or names a leader whose ID no member has reported.
func (c *Etcd) LeaderSeen(ctx context.Context, i int) (int, error) {
	hc := httpClient()
	st, err := c.status(ctx, hc, i)
	if err != nil {
		return -1, err
	}
	if st.Leader == "" || st.Leader == "0" {
		return -1, nil
	}
	for j, n := range c.Nodes {
		n.mu.Lock()
		id := n.id
		n.mu.Unlock()
		if id == "" && c.Running(j) {
			if s, err := c.status(ctx, hc, j); err == nil {
				id = s.Header.MemberID
			}
		}
		if id == st.Leader {
			return j, nil
		}
	}
	return -1, fmt.Errorf("testserver: etcd %s follows %s, an unknown member", c.Nodes[i].Name, st.Leader)
}

// Leader returns the index of the current leader among the running
// members, asking each for its status (etcd's JSON gateway).
func (c *Etcd) Leader(ctx context.Context) (int, error) {
	hc := httpClient()
	for {
		for i := range c.Nodes {
			if !c.Running(i) {
				continue
			}
			st, err := c.status(ctx, hc, i)
			if err == nil && st.Leader != "" && st.Leader != "0" && st.Leader == st.Header.MemberID {
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
