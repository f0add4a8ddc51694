package zookeeper_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/zookeeper"
)

// plantedID is a node id as leasehold names its nodes (32 lowercase hex
// digits), of an owner nobody has.
const plantedID = "00112233445566778899aabbccddeeff"

// testPlanted plants nodes in keys' queues, as any client the ACL lets in
// can, and checks that the store refuses each one leasehold could not have
// created as a foreign node naming it (before, a persistent node with a
// name like leasehold's, or a name whose sequence is not ZooKeeper's ten
// digits, was reported as a holder, and one out of the sequence's range
// was let through), holds nothing afterwards, and still reports a planted
// node that is valid as the holder it claims to be.
func testPlanted(t *testing.T, z *testserver.ZooKeeper, raw *zk.Conn) {
	st := openURL(t, z.URL("/planted"))
	defer st.Close()
	g, err := st.Acquire(tctx(t), areq("mine", 2*time.Second)) // makes the base
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Release(tctx(t), g)
	for _, tc := range []struct {
		what  string
		name  string
		flags int32
	}{
		{"persistent_node_named_as_leasehold's", plantedID + "-0000000000", 0},
		{"sequence_of_twenty_digits", plantedID + "-00000000000000000000", zk.FlagEphemeral},
		{"sequence_with_a_sign", plantedID + "-+000000001", zk.FlagEphemeral},
		{"sequence_beyond_int32", plantedID + "-2147483648", zk.FlagEphemeral},
		{"id_in_upper_case", strings.ToUpper(plantedID) + "-0000000000", zk.FlagEphemeral},
	} {
		t.Run(tc.what, func(t *testing.T) {
			key := tc.what
			parent := st.ParentOf(key)
			if _, err := raw.CreateContainer(parent, []byte("leasehold key"), zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			planted := parent + "/" + tc.name
			if _, err := raw.Create(planted, []byte("planted"), tc.flags, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			checkRefused(t, st, raw, key, planted)
		})
	}
	t.Run("valid_node_is_a_holder", func(t *testing.T) {
		parent := st.ParentOf("valid")
		if _, err := raw.CreateContainer(parent, []byte("leasehold key"), zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Create(parent+"/"+plantedID+"-0000000000", []byte("planted"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		_, stat, err := raw.Get(parent + "/" + plantedID + "-0000000000")
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.Acquire(tctx(t), areq("valid", 2*time.Second))
		var held *leasehold.HeldError
		if !errors.As(err, &held) || held.Label != "planted" || held.Token != uint64(stat.Czxid) {
			t.Fatalf("acquire of a key held by a valid node: %v, want a HeldError naming label planted and token %d", err, stat.Czxid)
		}
	})
}

// checkRefused checks that Acquire, AcquireWait and Holder of key, whose
// queue holds the planted node, refuse it as a foreign node naming it, and
// leave only the planted node in the queue.
func checkRefused(t *testing.T, st *zookeeper.Store, raw *zk.Conn, key, planted string) {
	t.Helper()
	check := func(op string, err error) {
		t.Helper()
		var fr *leasehold.ForeignRecordError
		if !errors.Is(err, zookeeper.ErrForeignNode) || !errors.Is(err, leasehold.ErrForeignRecord) || !errors.Is(err, leasehold.ErrStore) ||
			!errors.As(err, &fr) || fr.Object != planted || fr.Reason == "" {
			t.Errorf("%s: %v, want a StoreError with a ForeignRecordError naming %s", op, err, planted)
			return
		}
		t.Logf("%s: %v", op, err)
	}
	_, err := st.Acquire(tctx(t), areq(key, 2*time.Second))
	check("acquire", err)
	// Before, a waiter queued behind a persistent node until its context
	// ended: the deadline here is only how long the old code waited.
	wctx, cancel := context.WithTimeout(tctx(t), 5*time.Second)
	defer cancel()
	_, err = st.AcquireWait(wctx, areq(key, 2*time.Second))
	check("acquire wait", err)
	_, err = st.Holder(tctx(t), key)
	check("holder", err)
	kids, _, err := raw.Children(st.ParentOf(key))
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || st.ParentOf(key)+"/"+kids[0] != planted {
		t.Errorf("the refusals left nodes behind: %v, want only %s", kids, planted)
	}
}
