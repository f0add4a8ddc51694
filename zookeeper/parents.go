package zookeeper

import (
	"errors"

	"github.com/go-zookeeper/zk"
)

// maxParents bounds the key nodes a store remembers as verified.
// Forgetting one is always safe: the next acquire of its key takes the
// path that verifies it again.
const maxParents = 4096

// The store's parents (a bounded.Map of at most maxParents, by key node
// path) remember the key nodes this store has read as leasehold's (a list
// that found a parent's data the length of parentMark, the parent not
// ephemeral, and every child named as leasehold names its nodes), by their
// creation zxid, which tells the node apart from one made later at the
// same path. An acquire on a remembered parent creates its node in a multi
// that also writes the parent's mark again (see createOnVerified); on any
// other parent it creates its node alone and reads its queue and its node,
// so that a node that is not leasehold's is refused before the store
// writes its data.

// created is what a create told of the attempt's node: its path and, when
// the create was a multi on a verified parent, its creation zxid and
// whether it is alone in its queue (then it holds the key without a
// list).
type created struct {
	path  string
	czxid int64 // 0: unknown, read the node
	alone bool
}

// createOnVerified creates the attempt's ephemeral sequential node in
// parent, which this store verified at creation zxid want, in one multi
// with a write of parent's mark (the data it already holds): the write's
// answer is parent's stat after the transaction, whose modification zxid
// is the transaction's, so the new node's creation zxid (its token), and
// whose child count says whether the node is alone in the queue. If
// parent is not the node verified (its creation zxid differs: it was
// deleted and made again since), it is forgotten and the node's queue is
// read as for any parent.
func (s *Store) createOnVerified(ss *session, parent, id, label string, want int64) (created, error) {
	res, err := ss.conn.Multi(
		&zk.CreateRequest{Path: parent + "/" + id + "-", Data: []byte(label), Acl: s.acl, Flags: zk.FlagEphemeral | zk.FlagSequence},
		&zk.SetDataRequest{Path: parent, Data: parentMark, Version: -1},
	)
	if err == nil && len(res) != 2 {
		err = zk.ErrAPIError
	}
	for i := 0; err == nil && i < len(res); i++ {
		err = res[i].Error
	}
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			s.parents.Delete(parent)
		}
		return created{}, err
	}
	c := created{path: res[0].String}
	st := res[1].Stat
	if st == nil || st.Czxid != want || st.EphemeralOwner != 0 {
		s.parents.Delete(parent)
		return c, nil
	}
	c.czxid, c.alone = st.Mzxid, st.NumChildren == 1
	return c, nil
}
