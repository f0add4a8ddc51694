package core

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Node runs the lease scripts on one Redis deployment (a server, or a
// cluster through a cluster-aware client).
type Node struct {
	Client  Scripter
	Names   Names
	Cluster bool // keys of different leases may live on different nodes
}

// Lease is a lease as a node stores it.
type Lease struct {
	Owner     string // the holder's proof of ownership: never shown to callers
	Label     string
	Token     uint64
	Remaining time.Duration
}

// TTLMillis rounds ttl up to whole milliseconds, the granularity of PEXPIRE.
func TTLMillis(ttl time.Duration) int64 {
	ms := int64(ttl / time.Millisecond)
	if ttl%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// OwnerPrefix is the start of every lease value of owner. The length
// makes it unambiguous: no owner's prefix starts another owner's values.
func OwnerPrefix(owner string) string {
	return strconv.Itoa(len(owner)) + ":" + owner + ":"
}

// GrantPrefix is the start of the lease value of owner's grant token:
// OwnerPrefix(owner), the token and ':', made in one allocation.
func GrantPrefix(owner string, token uint64) string {
	var b strings.Builder
	b.Grow(2*20 + len(owner) + 3)
	b.WriteString(strconv.Itoa(len(owner)))
	b.WriteByte(':')
	b.WriteString(owner)
	b.WriteByte(':')
	var d [20]byte
	b.Write(strconv.AppendUint(d[:0], token, 10))
	b.WriteByte(':')
	return b.String()
}

// Holder reads key's lease; nil when nobody holds it.
func (n *Node) Holder(ctx context.Context, key string) (*Lease, error) {
	lock := n.Names.Lock(key)
	r, err := Run(ctx, n.Client, HolderScript, []string{lock}, nil)
	if err != nil {
		return nil, err
	}
	a, ok := r.([]any)
	if !ok && r != nil {
		return nil, unexpected("holder", r)
	}
	if len(a) == 0 {
		return nil, nil
	}
	if len(a) != 2 {
		return nil, unexpected("holder", r)
	}
	v, ok1 := asString(a[0])
	ms, ok2 := asInt(a[1])
	if !ok1 || !ok2 {
		return nil, unexpected("holder", r)
	}
	l, err := ParseLease(v, ms)
	if err != nil {
		return nil, foreign(lock, err.Error())
	}
	return l, nil
}

// RenewItem is one lease of a batch renewal.
type RenewItem struct {
	Key   string
	Owner string
	Token uint64
	TTL   int64 // milliseconds
}

// BatchSize is the most leases one renew_many call carries. Larger batches
// are split and the calls sent at once, so the server never runs one long
// script and the batch still costs about one round trip.
const BatchSize = 1000

// maxInFlight bounds the concurrent calls of one batch.
const maxInFlight = 16

// RenewMany renews every item. renewed[i] reports whether item i was
// renewed; errs[i] is set when the call carrying item i failed.
func (n *Node) RenewMany(ctx context.Context, items []RenewItem) (renewed []bool, errs []error) {
	renewed = make([]bool, len(items))
	errs = make([]error, len(items))
	groups := n.group(items)

	var wg sync.WaitGroup
	sem := make(chan struct{}, maxInFlight)
	for _, g := range groups {
		sem <- struct{}{}
		wg.Add(1)
		go func(idx []int) {
			defer wg.Done()
			defer func() { <-sem }()
			n.renewChunk(ctx, items, idx, renewed, errs)
		}(g)
	}
	wg.Wait()
	return renewed, errs
}

// group splits items into calls: by hash slot on a cluster (a script's
// keys must share a slot there), then into chunks of at most BatchSize.
func (n *Node) group(items []RenewItem) [][]int {
	var groups [][]int
	add := func(idx []int) {
		for len(idx) > BatchSize {
			groups = append(groups, idx[:BatchSize:BatchSize])
			idx = idx[BatchSize:]
		}
		if len(idx) > 0 {
			groups = append(groups, idx)
		}
	}
	if !n.Cluster {
		idx := make([]int, len(items))
		for i := range idx {
			idx[i] = i
		}
		add(idx)
		return groups
	}
	bySlot := make(map[uint16][]int)
	var order []uint16
	for i, it := range items {
		s := Slot(n.Names.Lock(it.Key))
		if _, ok := bySlot[s]; !ok {
			order = append(order, s)
		}
		bySlot[s] = append(bySlot[s], i)
	}
	for _, s := range order {
		add(bySlot[s])
	}
	return groups
}

func (n *Node) renewChunk(ctx context.Context, items []RenewItem, idx []int, renewed []bool, errs []error) {
	keys := make([]string, len(idx))
	args := make([]string, 0, 2*len(idx))
	for j, i := range idx {
		it := items[i]
		keys[j] = n.Names.Lock(it.Key)
		args = append(args, GrantPrefix(it.Owner, it.Token), strconv.FormatInt(it.TTL, 10))
	}
	r, err := Run(ctx, n.Client, RenewManyScript, keys, args)
	if err == nil {
		a, ok := r.([]any)
		if !ok || len(a) != len(idx) {
			err = unexpected("renew_many", r)
		} else {
			for j, i := range idx {
				ok, perr := parseBool("renew_many", a[j])
				if perr != nil {
					errs[i] = perr
					continue
				}
				renewed[i] = ok
			}
			return
		}
	}
	for _, i := range idx {
		errs[i] = err
	}
}
