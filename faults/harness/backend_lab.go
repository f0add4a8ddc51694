package harness

import (
	"context"

	"github.com/leasehold-go/leasehold/faults/netlab"
)

// memberLab builds a lab of n members for a replicated store when the
// process runs in the run's private namespace (netlab.Inside), and returns
// it with the members' addresses and argv prefixes (member i on
// lab.Addr(i), started through lab.Prefix(i)); elsewhere nil, nil, nil:
// the members run on loopback.
func memberLab(ctx context.Context, n int) (*netlab.Lab, []string, func(int) []string, error) {
	if !netlab.Inside() {
		return nil, nil, nil, nil
	}
	lab, err := netlab.New(ctx, n)
	if err != nil {
		return nil, nil, nil, err
	}
	hosts := make([]string, n)
	for i := range n {
		hosts[i] = lab.Addr(i)
	}
	return lab, hosts, lab.Prefix, nil
}

// pinnedEndpoints returns the endpoints holder slot names: every member
// for slot 0, only member (slot-1) mod len(eps) for slot >= 1 (the
// members' proxies, in the order of Endpoints).
func pinnedEndpoints(slot int, eps []string) []string {
	if slot == 0 || len(eps) == 0 {
		return eps
	}
	m := (slot - 1) % len(eps)
	return eps[m : m+1]
}
