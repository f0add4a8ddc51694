// Package pgwire holds the PostgreSQL wire-protocol readers the late
// clean-up fault (F5c) uses to recognise, in the bytes its proxy forwards,
// a granted lease-row acquire and a statement being run: the postgres
// backend hands them to proxy.Proxy.LoseReplyDelayRequests.
package pgwire

import (
	"bytes"
	"encoding/binary"
)

// pgMessages calls f with the type and body of each protocol message in
// chunk (which starts at a message boundary, as the client and the server
// take turns), and stops at the first that does not fit.
func pgMessages(b []byte, f func(typ byte, body []byte)) {
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5]))
		if n < 4 || len(b) < 1+n {
			return
		}
		f(b[0], b[5:1+n])
		b = b[1+n:]
	}
}

// GrantedLeaseReply reports whether chunk, read from the server, holds the
// answer of a lease-row acquire that granted the key: the upsert's
// CommandComplete ("INSERT 0 1") after a DataRow of one column (the token;
// an acquire that finds the key held returns no row, "INSERT 0 0"). No
// other statement of the store inserts.
func GrantedLeaseReply(b []byte) bool {
	row, insert := false, false
	pgMessages(b, func(typ byte, msg []byte) {
		switch typ {
		case 'D':
			row = row || len(msg) >= 2 && binary.BigEndian.Uint16(msg[:2]) == 1
		case 'C':
			insert = insert || row && bytes.HasPrefix(msg, []byte("INSERT 0 1\x00"))
		}
	})
	return insert
}

// RunsStatement reports whether chunk, sent by the client, runs a
// statement: an Execute of the extended protocol or a simple Query.
func RunsStatement(b []byte) bool {
	found := false
	pgMessages(b, func(typ byte, _ []byte) { found = found || typ == 'E' || typ == 'Q' })
	return found
}

// FirstParam returns the value of the first parameter of the first Bind
// message in chunk, sent by the client (ok false: no Bind, no parameter, a
// NULL one, or a message that does not parse). Every statement of the
// lease-row store that names one key binds that key first.
func FirstParam(b []byte) (v []byte, ok bool) {
	done := false
	pgMessages(b, func(typ byte, msg []byte) {
		if done || typ != 'B' {
			return
		}
		done = true
		v, ok = bindFirst(msg)
	})
	return v, ok
}

// bindFirst reads the first parameter of a Bind message's body: portal
// and statement names, the parameter format codes, then the parameters.
func bindFirst(m []byte) ([]byte, bool) {
	for range 2 { // the portal's and the statement's names
		i := bytes.IndexByte(m, 0)
		if i < 0 {
			return nil, false
		}
		m = m[i+1:]
	}
	if len(m) < 2 {
		return nil, false
	}
	nf := int(binary.BigEndian.Uint16(m))
	if len(m) < 2+2*nf+2 {
		return nil, false
	}
	m = m[2+2*nf:]
	if binary.BigEndian.Uint16(m) == 0 || len(m) < 6 {
		return nil, false
	}
	n := int32(binary.BigEndian.Uint32(m[2:]))
	if n < 0 || int(n) > len(m)-6 {
		return nil, false
	}
	return m[6 : 6+n], true
}

// SameKey reports whether request chunks a and b both bind the same first
// parameter (the key, for the lease-row store's statements).
func SameKey(a, b []byte) bool {
	ka, ok := FirstParam(a)
	if !ok {
		return false
	}
	kb, ok := FirstParam(b)
	return ok && bytes.Equal(ka, kb)
}
