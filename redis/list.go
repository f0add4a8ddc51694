package redis

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// Scanner is an optional Client capability, used by Store.List: SCAN over
// the whole keyspace (every primary of a cluster), reporting the names
// that match a glob pattern in batches. A name may be reported twice.
type Scanner interface {
	Scan(ctx context.Context, match string, fn func(names []string) error) error
}

var _ leasehold.Lister = (*Store)(nil)

// errNoScan: the client cannot SCAN.
var errNoScan = errors.New("the client does not implement redis.Scanner: listing needs SCAN")

// List reports the current holders of keys that start with prefix. It
// SCANs the keyspace (a cost proportional to the whole database, as every
// SCAN) and reads each lease found; a lease that ends meanwhile is left
// out. Holders come sorted by key.
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := s.check(ctx, "list"); err != nil {
		return nil, err
	}
	sc, ok := s.c.(Scanner)
	if !ok {
		return nil, &leasehold.StoreError{Store: Name, Op: "list", Err: errNoScan}
	}
	names := s.node.Names
	match := globEscape(names.Prefix()) + "{" + globEscape(core.Encode(prefix)) + "*}:lock"
	seen := map[string]bool{}
	var keys []string
	err := sc.Scan(ctx, match, func(found []string) error {
		for _, n := range found {
			k, ok := names.KeyOfLock(n)
			if ok && strings.HasPrefix(k, prefix) && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.fail(ctx, "list", prefix, err)
	}
	slices.Sort(keys)

	hs := make([]*leasehold.Holder, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			l, err := s.node.Holder(ctx, k)
			if err != nil {
				errs[i] = s.fail(ctx, "list", k, err)
				return
			}
			if l != nil {
				hs[i] = &leasehold.Holder{Key: k, Label: l.Label, Token: l.Token, Remaining: l.Remaining}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]leasehold.Holder, 0, len(keys))
	for _, h := range hs {
		if h != nil {
			out = append(out, *h)
		}
	}
	return out, nil
}

// globEscape escapes the characters that SCAN's MATCH treats specially.
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
