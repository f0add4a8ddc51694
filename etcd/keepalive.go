package etcd

import (
	"context"
	"time"

	"github.com/leasehold-go/leasehold/internal/sessionpool"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// keepalive keeps the session's etcd lease alive over one LeaseKeepAlive
// stream, re-opened after errors. Each request's send time anchors the
// expiry lower bound (never the reply's arrival). When the lower bound
// passes without a successful keepalive, or etcd answers that the lease is
// gone, the session is lost.
func (ss *session) keepalive(t0 time.Time) {
	s := ss.st
	lc := pb.NewLeaseClient(s.cli.ActiveConnection())
	var ks *kaStream
	defer func() { ks.close() }()
	once := func() kaOutcome {
		if ks == nil {
			ks = openKeepAlive(s.sessions.Ctx(), lc)
		}
		res := kaFailed
		if ks != nil {
			res = ss.refresh(ks)
		}
		if res == kaFailed {
			ks.close()
			ks = nil
		}
		return res
	}
	// Gone: etcd says the lease is gone.
	ss.KeepAlive(t0, ss.interval, once, ss.markLost, func() {
		// The lease may still live if the server took a keepalive whose
		// reply we lost: revoke it so its keys do not outlive the grants.
		ss.markLost()
		ss.close(s.sessions.Ctx())
	})
}

// kaOutcome is the outcome of one keepalive request.
type kaOutcome = sessionpool.Outcome

// The outcomes of a keepalive: kaFailed closes the stream, to re-open it.
const (
	kaOK      = sessionpool.KeepOK
	kaFailed  = sessionpool.KeepFailed
	kaGone    = sessionpool.KeepGone
	kaStopped = sessionpool.KeepStopped
)

// refresh sends one keepalive on ks and waits up to an interval for the
// reply, which moves the lease's expiry lower bound to the request's send
// time plus the TTL etcd granted.
func (ss *session) refresh(ks *kaStream) kaOutcome {
	sent := time.Now()
	if err := ks.stream.Send(&pb.LeaseKeepAliveRequest{ID: int64(ss.id)}); err != nil {
		return kaFailed
	}
	wait := time.NewTimer(ss.interval)
	defer wait.Stop()
	select {
	case r := <-ks.results:
		switch {
		case r.err != nil:
			return kaFailed
		case r.resp.TTL <= 0:
			return kaGone
		}
		ss.extend(sent, r.resp.TTL)
		return kaOK
	case <-wait.C:
		return kaFailed
	case <-ss.Stop():
		return kaStopped
	}
}

// kaStream is one LeaseKeepAlive stream, with a goroutine passing its
// replies to results.
type kaStream struct {
	stream   pb.Lease_LeaseKeepAliveClient
	cancel   context.CancelFunc
	results  chan kaResult
	recvDone chan struct{}
}

type kaResult struct {
	resp *pb.LeaseKeepAliveResponse
	err  error
}

// openKeepAlive opens a keepalive stream that ends with ctx, or returns nil
// if it cannot.
func openKeepAlive(ctx context.Context, lc pb.LeaseClient) *kaStream {
	sctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	st, err := lc.LeaseKeepAlive(sctx)
	if err != nil {
		cancel()
		return nil
	}
	ks := &kaStream{stream: st, cancel: cancel, results: make(chan kaResult, 1), recvDone: make(chan struct{})}
	go func() {
		defer close(ks.recvDone)
		for {
			resp, err := st.Recv()
			select {
			case ks.results <- kaResult{resp, err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ks
}

// close ends the stream and waits for its receiving goroutine. A nil
// kaStream is fine.
func (ks *kaStream) close() {
	if ks == nil {
		return
	}
	ks.cancel()
	<-ks.recvDone
}
