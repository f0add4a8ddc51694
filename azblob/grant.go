package azblob

import (
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/leasehold-go/leasehold"
)

// grantState is a grant's Private value: the ETag of the lease blob as
// the acquire's metadata write left it, so that a renewal or release of a
// grant made by this process is one request (the lease operation, with
// If-Match on it), not a read first. It is used only for the key, owner
// and token it was made for.
type grantState struct {
	key, owner string
	token      uint64
	ceiling    uint64
	etag       atomic.Pointer[azcore.ETag]
}

func newState(g leasehold.Grant, ceiling uint64, etag azcore.ETag) *grantState {
	st := &grantState{key: g.Key, owner: g.Owner, token: g.Token, ceiling: ceiling}
	st.etag.Store(&etag)
	return st
}

// stateOf returns g's state and the ETag to act on (nil to read first).
func stateOf(g leasehold.Grant) (*grantState, *azcore.ETag) {
	st, _ := g.Private.(*grantState)
	if st == nil || st.key != g.Key || st.owner != g.Owner || st.token != g.Token {
		return nil, nil
	}
	return st, st.etag.Load()
}
