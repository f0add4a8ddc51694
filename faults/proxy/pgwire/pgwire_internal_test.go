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

// bind is a Bind message of the given parameters (nil: NULL), all in text
// format.
func bind(params ...[]byte) []byte {
	body := []byte("\x00stmtcache_1\x00")
	body = binary.BigEndian.AppendUint16(body, 1)
	body = binary.BigEndian.AppendUint16(body, 0)
	body = binary.BigEndian.AppendUint16(body, uint16(len(params)))
	for _, p := range params {
		if p == nil {
			body = binary.BigEndian.AppendUint32(body, 0xffffffff)
			continue
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(p)))
		body = append(body, p...)
	}
	body = binary.BigEndian.AppendUint16(body, 0) // result formats
	return pgMsg('B', body)
}

func TestFirstParam(t *testing.T) {
	exec := append(pgMsg('D', []byte("P\x00")), append(pgMsg('E', []byte("\x00\x00\x00\x00\x00")), pgMsg('S', nil)...)...)
	for _, c := range []struct {
		name  string
		chunk []byte
		want  string
		ok    bool
	}{
		{"acquire", append(bind([]byte("k4"), []byte("owner"), []byte(""), []byte("750000")), exec...), "k4", true},
		{"after a parse", append(pgMsg('P', []byte("\x00SELECT $1\x00\x00\x00")), bind([]byte("k1"))...), "k1", true},
		{"empty key", bind([]byte{}), "", true},
		{"no parameters", bind(), "", false},
		{"NULL", bind(nil, []byte("x")), "", false},
		{"no bind", exec, "", false},
		{"simple query", pgMsg('Q', []byte("SELECT 1\x00")), "", false},
		{"truncated", bind([]byte("k4"))[:12], "", false},
		{"length beyond the message", func() []byte { b := bind([]byte("k4")); b[len(b)-5] = 9; return b }(), "", false},
	} {
		v, ok := FirstParam(c.chunk)
		if ok != c.ok || string(v) != c.want {
			t.Errorf("%s: FirstParam = %q, %v; want %q, %v", c.name, v, ok, c.want, c.ok)
		}
	}
	if !SameKey(bind([]byte("k4"), []byte("a")), bind([]byte("k4"), []byte("b"), []byte("c"))) {
		t.Error("SameKey: two statements on k4 differ")
	}
	if SameKey(bind([]byte("k4")), bind([]byte("k40"))) || SameKey(bind(), bind()) || SameKey(exec, exec) {
		t.Error("SameKey: different keys, or none, match")
	}
}

// FuzzFirstParam: any bytes parse without panic, and a value found lies
// within the chunk; a Bind built from the input's parameters yields its
// first one back.
func FuzzFirstParam(f *testing.F) {
	f.Add([]byte("k4"), []byte("owner"), bind([]byte("k4")))
	f.Add([]byte{}, []byte{0}, pgMsg('B', []byte("\x00\x00\x00\x01\x00\x00\x00\x01\xff\xff\xff\xff")))
	f.Fuzz(func(t *testing.T, key, owner, raw []byte) {
		if v, ok := FirstParam(raw); ok && len(v) > len(raw) {
			t.Fatalf("FirstParam(%x) = %x: longer than the chunk", raw, v)
		}
		b := append(pgMsg('P', []byte("\x00q\x00\x00\x00")), bind(key, owner)...)
		if v, ok := FirstParam(b); !ok || string(v) != string(key) {
			t.Fatalf("FirstParam of a Bind of %q = %q, %v", key, v, ok)
		}
		if !SameKey(b, bind(key)) {
			t.Fatalf("SameKey: a Bind of %q and another of it differ", key)
		}
	})
}
