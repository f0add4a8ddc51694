package pgwire

import (
	"encoding/binary"
	"testing"
)

// pgMsg frames one protocol message.
func pgMsg(typ byte, body []byte) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}

// dataRow is a DataRow of the given column values.
func dataRow(cols ...[]byte) []byte {
	body := binary.BigEndian.AppendUint16(nil, uint16(len(cols)))
	for _, c := range cols {
		body = binary.BigEndian.AppendUint32(body, uint32(len(c)))
		body = append(body, c...)
	}
	return pgMsg('D', body)
}

func TestGrantedLeaseReply(t *testing.T) {
	token := binary.BigEndian.AppendUint64(nil, 42)
	ready := pgMsg('Z', []byte{'I'})
	chunk := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return append(b, ready...)
	}
	for _, c := range []struct {
		name  string
		chunk []byte
		want  bool
	}{
		{"granted acquire", chunk(pgMsg('2', nil), dataRow(token), pgMsg('C', []byte("INSERT 0 1\x00"))), true},
		{"held key", chunk(pgMsg('2', nil), pgMsg('C', []byte("INSERT 0 0\x00"))), false},
		{"clean-up's token read", chunk(pgMsg('2', nil), dataRow(token), pgMsg('C', []byte("SELECT 1\x00"))), false},
		{"holder read", chunk(pgMsg('2', nil), dataRow([]byte("l"), token, token), pgMsg('C', []byte("SELECT 1\x00"))), false},
		{"release", chunk(pgMsg('2', nil), dataRow([]byte{0}), pgMsg('C', []byte("UPDATE 1\x00"))), false},
	} {
		if got := GrantedLeaseReply(c.chunk); got != c.want {
			t.Errorf("%s: GrantedLeaseReply = %v, want %v", c.name, got, c.want)
		}
	}
}
