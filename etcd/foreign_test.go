package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/internal/testserver"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// plantedValue is an entry's value as leasehold writes it, for an owner
// hash nobody has.
const plantedValue = `{"owner":"00112233445566778899aabbccddeeff","label":"planted"}`

// testPlanted plants keys in keys' queues, as anyone who may write under
// the store's prefix can, and checks that the store refuses each one that
// leasehold could not have written as a foreign record naming it (before,
// Acquire reported such a key as a holder, one without a lease for ever,
// and AcquireWait queued behind it until its context ended), holds nothing
// afterwards, and still reports a planted key that is a valid entry as the
// holder it claims to be.
func testPlanted(t *testing.T, c *testserver.Etcd) {
	cli := etcdClient(t, c)
	st := newStore(t, c, nil)
	ctx := tctx(t)
	// A lease id with letters in its hex, for the upper-case name.
	lease, err := pb.NewLeaseClient(cli.ActiveConnection()).LeaseGrant(ctx, &pb.LeaseGrantRequest{TTL: 60, ID: 0xabcdef})
	if err != nil {
		t.Fatal(err)
	}
	other, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	type plant struct {
		name  func(key string) string
		value string
		lease clientv3.LeaseID
	}
	entry := func(id clientv3.LeaseID) func(string) string {
		return func(key string) string { return etcd.EntryKey("", key, id, 0) }
	}
	named := func(tail string) func(string) string {
		return func(key string) string { return etcd.QueuePrefix("", key) + tail }
	}
	for _, tc := range []struct {
		what string
		plant
	}{
		{"garbage_value_no_lease", plant{entry(clientv3.LeaseID(lease.ID)), "garbage", 0}},
		{"valid_value_no_lease", plant{entry(clientv3.LeaseID(lease.ID)), plantedValue, 0}},
		{"garbage_value", plant{entry(clientv3.LeaseID(lease.ID)), "garbage", clientv3.LeaseID(lease.ID)}},
		{"value_with_extra_field", plant{entry(clientv3.LeaseID(lease.ID)), `{"owner":"00112233445566778899aabbccddeeff","x":1}`, clientv3.LeaseID(lease.ID)}},
		{"value_owner_not_hex", plant{entry(clientv3.LeaseID(lease.ID)), `{"owner":"zz112233445566778899aabbccddeeff"}`, clientv3.LeaseID(lease.ID)}},
		{"lease_other_than_the_name's", plant{entry(other.ID), plantedValue, clientv3.LeaseID(lease.ID)}},
		{"name_not_an_entry's", plant{named("garbage"), plantedValue, clientv3.LeaseID(lease.ID)}},
		{"slot_out_of_range", plant{named(fmt.Sprintf("%016x-99999999999", clientv3.LeaseID(lease.ID))), plantedValue, clientv3.LeaseID(lease.ID)}},
		{"slot_with_leading_zero", plant{named(fmt.Sprintf("%016x-00", clientv3.LeaseID(lease.ID))), plantedValue, clientv3.LeaseID(lease.ID)}},
		{"lease_id_upper_case", plant{named(fmt.Sprintf("%016X-0", clientv3.LeaseID(lease.ID))), plantedValue, clientv3.LeaseID(lease.ID)}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			key := uniqueKey(t, "k")
			name := tc.name(key)
			var opts []clientv3.OpOption
			if tc.lease != 0 {
				opts = append(opts, clientv3.WithLease(tc.lease))
			}
			if _, err := cli.Put(tctx(t), name, tc.value, opts...); err != nil {
				t.Fatal(err)
			}
			checkRefused(t, st, cli, key, name)
		})
	}
	t.Run("valid_entry_is_a_holder", func(t *testing.T) {
		key := uniqueKey(t, "k")
		name := etcd.EntryKey("", key, clientv3.LeaseID(lease.ID), 0)
		put, err := cli.Put(tctx(t), name, plantedValue, clientv3.WithLease(clientv3.LeaseID(lease.ID)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.Acquire(tctx(t), areq(key, time.Second))
		var held *leasehold.HeldError
		if !errors.As(err, &held) || held.Label != "planted" || held.Token != uint64(put.Header.Revision) {
			t.Fatalf("acquire of a key held by a valid entry: %v, want a HeldError naming label planted and token %d", err, put.Header.Revision)
		}
	})
}

// checkRefused checks that Acquire, AcquireWait, Holder and List of key,
// whose queue holds the planted name, refuse it as a foreign record naming
// it, and leave only the planted name in the queue.
func checkRefused(t *testing.T, st *etcd.Store, cli *clientv3.Client, key, name string) {
	t.Helper()
	check := func(op string, err error) {
		t.Helper()
		var fr *leasehold.ForeignRecordError
		if !errors.Is(err, leasehold.ErrForeignRecord) || !errors.Is(err, leasehold.ErrStore) || !errors.As(err, &fr) || fr.Object != name || fr.Reason == "" {
			t.Errorf("%s: %v, want a StoreError with a ForeignRecordError naming %s", op, err, name)
			return
		}
		t.Logf("%s: %v", op, err)
	}
	_, err := st.Acquire(tctx(t), areq(key, time.Second))
	check("acquire", err)
	// Before, a waiter queued behind the planted key until its context
	// ended: the deadline here is only how long the old code waited.
	wctx, cancel := context.WithTimeout(tctx(t), 5*time.Second)
	defer cancel()
	_, err = st.AcquireWait(wctx, areq(key, time.Second))
	check("acquire wait", err)
	_, err = st.Holder(tctx(t), key)
	check("holder", err)
	_, err = st.List(tctx(t), key)
	check("list", err)
	resp, err := cli.Get(tctx(t), etcd.QueuePrefix("", key), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != name {
		t.Errorf("the refusals left entries behind: %d keys in the queue, want only %s", len(resp.Kvs), name)
	}
}
