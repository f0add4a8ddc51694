package etcd

import (
	"context"
	"fmt"
	"strconv"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Fencing writes to etcd itself.
//
// A lease's token is its entry's CreateRevision, so a write to etcd can
// be guarded by the lease in the same transaction: IsOwner is the compare
// that holds only while that grant still holds the key (the generalisation
// of concurrency.Mutex.IsOwner to any leasehold store prefix). It is the
// strongest guard: a write made after the lease ended (expired, released, or
// taken by a newer holder) is refused by etcd, however long the writer was
// paused.
//
// When the protected data must accept writes from a holder whose lease is
// being handed over, or lives under another key than the lease, keep a fence
// key next to it: FencedTxn applies ops only if token is at least the highest
// token the fence key has accepted, and stores token there, in one
// transaction.

// IsOwner returns a compare that succeeds only while grant g still holds its
// key, in a store with the given etcd key prefix ("" means DefaultPrefix):
// g's entry still has g.Token as its CreateRevision. Use it in the If of a
// transaction that writes the protected data.
//
// g must be a grant as a Store returned it: its Private names the entry
// (entries are named by the session that put them, not by the owner). For
// a grant that does not (one rebuilt from its key, owner and token, or
// whose owner is not the one the entry was made for) the compare never
// succeeds; Store.IsOwnerLookup finds such a grant's entry first.
func IsOwner(prefix string, g leasehold.Grant) clientv3.Cmp {
	r, _ := g.Private.(*grantRec)
	name := nameOf(prefix, g)
	if name == "" || r.entry.owner != ownerHash(g.Owner) {
		// No key's version is negative: a compare that never holds.
		return clientv3.Compare(clientv3.Version(QueuePrefix(prefix, g.Key)), "<", 0)
	}
	return clientv3.Compare(clientv3.CreateRevision(name), "=", int64(g.Token))
}

// IsOwner returns a compare that succeeds only while grant g still holds its
// key in this store (see the package function IsOwner).
func (s *Store) IsOwner(g leasehold.Grant) clientv3.Cmp { return IsOwner(s.prefix, g) }

// IsOwnerLookup returns IsOwner's compare for any grant of this store,
// including one rebuilt from its key, owner and token, which does not name
// its entry: it reads the key's queue for the entry with g's token and
// owner (one round trip; none if g names its entry). A grant that no longer
// holds its key is ErrNotHeld.
func (s *Store) IsOwnerLookup(ctx context.Context, g leasehold.Grant) (clientv3.Cmp, error) {
	if r, ok := g.Private.(*grantRec); ok && nameOf(s.prefix, g) != "" && r.entry.owner == ownerHash(g.Owner) {
		return IsOwner(s.prefix, g), nil
	}
	kv, err := s.findEntry(ctx, g)
	if err != nil {
		return clientv3.Cmp{}, s.storeErrOn(ctx, "is owner", err)
	}
	if kv == nil {
		return clientv3.Cmp{}, notHeld("is owner", g.Key, "")
	}
	return clientv3.Compare(clientv3.CreateRevision(string(kv.Key)), "=", int64(g.Token)), nil
}

// EncodeFence returns the form in which a fence key stores token: 20
// decimal digits, so that etcd's byte-wise value comparison orders tokens
// numerically.
func EncodeFence(token uint64) string { return fmt.Sprintf("%020d", token) }

// DecodeFence parses a fence key's value.
func DecodeFence(v []byte) (uint64, error) { return strconv.ParseUint(string(v), 10, 64) }

// FenceCmp returns the compare "the fence key's stored token is at most
// token". Like every value compare in etcd, it fails when fenceKey does not
// exist: FencedTxn handles that case.
func FenceCmp(fenceKey string, token uint64) clientv3.Cmp {
	if token == ^uint64(0) {
		return clientv3.Compare(clientv3.Value(fenceKey), "!=", "~") // every encoded token sorts below "~"
	}
	return clientv3.Compare(clientv3.Value(fenceKey), "<", EncodeFence(token+1))
}

// FencedTxn applies ops in one transaction if token is at least the highest
// token fenceKey has accepted (or fenceKey does not exist yet) and every one
// of extra holds, and then stores token in fenceKey. It reports whether the
// write was accepted; a stale token is refused with accepted false and no
// error. Pass s.IsOwner(g) in extra to also require that the lease
// is still held.
func FencedTxn(ctx context.Context, kv clientv3.KV, fenceKey string, token uint64, extra []clientv3.Cmp, ops ...clientv3.Op) (accepted bool, err error) {
	put := append([]clientv3.Op{clientv3.OpPut(fenceKey, EncodeFence(token))}, ops...)
	absent := append([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(fenceKey), "=", 0)}, extra...)
	present := append([]clientv3.Cmp{FenceCmp(fenceKey, token)}, extra...)
	resp, err := kv.Txn(ctx).If(absent...).Then(put...).
		Else(clientv3.OpTxn(present, put, nil)).Commit()
	if err != nil {
		return false, err
	}
	if resp.Succeeded {
		return true, nil
	}
	return resp.Responses[0].GetResponseTxn().GetSucceeded(), nil
}
