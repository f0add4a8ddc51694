package etcd

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Validation of what the store reads back from etcd. Anyone who may write
// under the store's prefix can put any key there with any value, with or
// without a lease; the store acts only on entries it could have written
// and refuses the others as foreign (leasehold.ErrForeignRecord), naming
// them, rather than report a planted key as a holder that never leaves.

// tokenOf converts a revision etcd reported for an entry (its
// CreateRevision, or the revision of the transaction that created it) into
// a fencing token. etcd's revisions are int64s that start at 1 and grow by
// one per write; no client can plant one (a put gets the store's next
// revision, whatever its value), so a revision near 2^63 takes 2^63 writes
// or an `etcdutl snapshot restore --bump-revision` that far. Still, the
// conversion to uint64 must not turn a revision that wrapped past 2^63-1
// (negative) into a huge token, nor make a token of 0 (no such revision;
// 0 is never granted): a negative revision is ErrTokensExhausted, 0 a
// foreign entry. A positive int64 converts to the same uint64, so a token
// never wraps and, as revisions only grow, never goes back.
func tokenOf(object string, rev int64) (uint64, error) {
	switch {
	case rev < 0:
		return 0, fmt.Errorf("%s: create revision %d: etcd's revision wrapped past 2^63-1: %w", object, rev, leasehold.ErrTokensExhausted)
	case rev == 0:
		return 0, &leasehold.ForeignRecordError{Object: object, Reason: "create revision 0 (no entry etcd created has it)"}
	}
	return uint64(rev), nil
}

// parseEntryName parses the part of an entry's name after its queue prefix:
// "<session lease id, 16 lowercase hex digits>-<slot, decimal>", as
// EntryKey writes it. It returns the lease id and the slot, or why the
// name is not one EntryKey makes.
func parseEntryName(tail string) (clientv3.LeaseID, int, error) {
	id, slot, ok := strings.Cut(tail, "-")
	if !ok {
		return 0, 0, errors.New(`the name is not "<lease id>-<slot>"`)
	}
	if len(id) != 16 || strings.ToLower(id) != id {
		return 0, 0, fmt.Errorf("lease id %q is not 16 lowercase hex digits", id)
	}
	lid, err := strconv.ParseUint(id, 16, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("lease id %q is not 16 lowercase hex digits", id)
	}
	if lid == 0 {
		return 0, 0, errors.New("lease id 0 (no lease)")
	}
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 || strconv.Itoa(n) != slot || n > maxSlot {
		return 0, 0, fmt.Errorf("slot %q is not a decimal number from 0 to %d", slot, maxSlot)
	}
	return clientv3.LeaseID(lid), n, nil
}

// maxSlot bounds the slots a valid entry name can have: a session uses the
// lowest free slot of a key, so its slots count the grants and waiters it
// has on the key at once.
const maxSlot = 1<<31 - 1

// decodeValue parses an entry's value as encodeValue writes it,
// {"owner":"<32 lowercase hex digits>"} or {"owner":"<hex>","label":<JSON
// string>}, and returns the owner hash and label, or why it is not such a
// value. The owner must be spelt exactly so (the owner compares of renew
// and release, ownerCmps, compare its bytes); the label may be any JSON
// string literal (encodeValue's escaping of it has varied with Go's JSON
// encoder, e.g. for invalid UTF-8).
func decodeValue(v []byte) (ownerID, string, error) {
	var h ownerID
	rest, ok := strings.CutPrefix(string(v), valueHead)
	if !ok {
		return h, "", fmt.Errorf("the value does not begin %s", valueHead)
	}
	if len(rest) <= 2*len(h) || rest[2*len(h)] != '"' || strings.ToLower(rest[:2*len(h)]) != rest[:2*len(h)] {
		return h, "", fmt.Errorf("the owner is not %d lowercase hex digits", 2*len(h))
	}
	if _, err := hex.Decode(h[:], []byte(rest[:2*len(h)])); err != nil {
		return h, "", fmt.Errorf("the owner is not %d lowercase hex digits", 2*len(h))
	}
	rest = rest[2*len(h)+1:]
	if rest == "}" {
		return h, "", nil
	}
	lit, ok := strings.CutPrefix(rest, labelHead)
	if !ok || !strings.HasSuffix(lit, "}") {
		return h, "", fmt.Errorf(`the value goes on with %.20q after the owner, not %s<string>} or }`, rest, labelHead)
	}
	lit = lit[:len(lit)-1]
	var label string
	if len(lit) < 2 || lit[0] != '"' || json.Unmarshal([]byte(lit), &label) != nil {
		return h, "", fmt.Errorf("the label %.20q is not a JSON string", lit)
	}
	return h, label, nil
}

// valueHead and labelHead are the fixed parts of an entry's value.
const (
	valueHead = `{"owner":"`
	labelHead = `,"label":`
)

// checkEntry validates kv, read from the queue whose prefix is qpfx: its
// name is one EntryKey makes, it lives under the etcd lease its name
// carries (so it ends with that lease: a key without a lease would hold
// the queue forever), its create revision makes a token (see tokenOf),
// and, unless keysOnly (the range left values out), its value is one
// encodeValue makes. It returns the entry's token and label; an entry that
// fails is a *leasehold.ForeignRecordError naming it, and a revision that
// wrapped is ErrTokensExhausted.
func checkEntry(qpfx string, kv *mvccpb.KeyValue, keysOnly bool) (token uint64, label string, err error) {
	name := string(kv.Key)
	tail, ok := strings.CutPrefix(name, qpfx)
	if !ok {
		return 0, "", &leasehold.ForeignRecordError{Object: name, Reason: fmt.Sprintf("not in the queue %s", qpfx)}
	}
	lid, _, err := parseEntryName(tail)
	if err != nil {
		return 0, "", &leasehold.ForeignRecordError{Object: name, Reason: err.Error()}
	}
	switch {
	case kv.Lease == 0:
		return 0, "", &leasehold.ForeignRecordError{Object: name, Reason: "it has no lease (it would never expire)"}
	case clientv3.LeaseID(kv.Lease) != lid:
		return 0, "", &leasehold.ForeignRecordError{Object: name, Reason: fmt.Sprintf("it is under lease %016x, not the lease %016x its name carries", uint64(kv.Lease), uint64(lid))}
	}
	if token, err = tokenOf(name, kv.CreateRevision); err != nil {
		return 0, "", err
	}
	if !keysOnly {
		if _, label, err = decodeValue(kv.Value); err != nil {
			return 0, "", &leasehold.ForeignRecordError{Object: name, Reason: err.Error()}
		}
	}
	return token, label, nil
}

// refused wraps an error of checkEntry or tokenOf for op.
func refused(op string, err error) error {
	return &leasehold.StoreError{Store: Name, Op: op, Err: err}
}

// checkGrant validates etcd's answer to a lease grant asking for want
// seconds: lease id and TTL. etcd grants the TTL asked for, or its minimum
// TTL if that is longer, never less, and never lease id 0 (no lease); an
// answer that does not is refused rather than make a session whose
// keepalive period (half the lease's TTL beyond the class's) is not
// positive.
func checkGrant(id clientv3.LeaseID, ttl, want int64) error {
	if id == 0 || ttl < want || ttl > maxLeaseTTL {
		return &leasehold.ForeignRecordError{Object: fmt.Sprintf("lease %016x", uint64(id)),
			Reason: fmt.Sprintf("granted with a TTL of %d s for %d s asked for", ttl, want)}
	}
	return nil
}

// maxLeaseTTL is etcd's largest lease TTL, in seconds (lease.MaxLeaseTTL).
const maxLeaseTTL = 9_000_000_000

// leaseTTL converts a lease TTL etcd reported, in seconds, to a duration:
// 0 for a TTL that is not positive or exceeds etcd's maximum (which would
// overflow a time.Duration).
func leaseTTL(sec int64) time.Duration {
	if sec <= 0 || sec > maxLeaseTTL {
		return 0
	}
	return time.Duration(sec) * time.Second
}
