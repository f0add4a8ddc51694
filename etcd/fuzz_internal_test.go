package etcd

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// FuzzEntryName: an entry name's tail (after its queue prefix) that
// parseEntryName accepts is exactly the one EntryKey writes for its lease
// and slot; a refusal says what is wrong.
func FuzzEntryName(f *testing.F) {
	for _, s := range []string{"0000000000abcdef-0", "7fffffffffffffff-12", "ffffffffffffffff-2147483647",
		"0000000000000000-0", "0000000000ABCDEF-0", "0000000000abcdef-01", "0000000000abcdef-+1", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tail string) {
		id, slot, err := parseEntryName(tail)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "lease id") && !strings.Contains(msg, "slot") && !strings.Contains(msg, "name") {
				t.Fatalf("parseEntryName(%q): %q names no part of the name", tail, msg)
			}
			return
		}
		if id == 0 || slot < 0 || slot > maxSlot {
			t.Fatalf("parseEntryName(%q) = %x, %d: out of range", tail, id, slot)
		}
		if got, want := EntryKey("", "k", id, slot), QueuePrefix("", "k")+tail; got != want {
			t.Fatalf("parseEntryName(%q) = %x, %d, written back as %q", tail, id, slot, got)
		}
	})
}

// FuzzEntryValue: a value decodeValue accepts passes the owner compares
// of renew and release for its owner, and its owner and label survive
// encodeValue; every value encodeValue writes (here with the fuzzed bytes
// as the label) is accepted with its label; a refusal says what is wrong.
func FuzzEntryValue(f *testing.F) {
	h := ownerHash("o")
	for _, s := range []string{encodeValue(h, ""), encodeValue(h, "a label"), encodeValue(h, "\xff<&>"),
		`{"owner":"00112233445566778899aabbccddeeff","label":"\u003c"}`, `{"owner":"00112233445566778899aabbccddeeff","x":1}`,
		`{"owner":"0011"}`, "garbage", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		got, label, err := decodeValue(v)
		if err == nil {
			if !isOwnerValue(v, got) {
				t.Fatalf("decodeValue(%q) accepted a value the owner compares refuse", v)
			}
			if g2, l2, err := decodeValue([]byte(encodeValue(got, label))); err != nil || g2 != got || l2 != label {
				t.Fatalf("decodeValue(%q) = %x, %q; written back and read: %x, %q, %v", v, got, label, g2, l2, err)
			}
		} else if !strings.Contains(err.Error(), "owner") && !strings.Contains(err.Error(), "label") && !strings.Contains(err.Error(), "value") {
			t.Fatalf("decodeValue(%q): %q names no part of the value", v, err)
		}
		// The fuzzed bytes as a label: json.Marshal writes each invalid
		// UTF-8 byte as U+FFFD, as a conversion to runes does.
		w := encodeValue(ownerHash(string(v)), string(v))
		if g2, l2, err := decodeValue([]byte(w)); err != nil || g2 != ownerHash(string(v)) || l2 != string([]rune(string(v))) {
			t.Fatalf("encodeValue(label %q) = %q, read back as %x, %q, %v", v, w, g2, l2, err)
		}
	})
}

// FuzzCheckEntry: an entry checkEntry accepts is one EntryKey names in the
// queue, under the lease its name carries, with a positive create revision
// that is its token and a value decodeValue accepts; a refusal is a
// ForeignRecordError naming the entry, or ErrTokensExhausted for a revision
// that wrapped.
func FuzzCheckEntry(f *testing.F) {
	const q = "leasehold/k/q/"
	good := encodeValue(ownerHash("o"), "l")
	f.Add(q+"0000000000abcdef-3", []byte(good), int64(0xabcdef), int64(42))
	f.Add(q+"0000000000abcdef-3", []byte(good), int64(0), int64(42))
	f.Add(q+"0000000000abcdef-3", []byte(good), int64(0xabcdef), int64(0))
	f.Add(q+"0000000000abcdef-3", []byte(good), int64(0xabcdef), int64(math.MinInt64))
	f.Add(q+"ffffffffffffffff-0", []byte(good), int64(-1), int64(math.MaxInt64))
	f.Add("leasehold/j/q/0000000000abcdef-3", []byte("x"), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, name string, value []byte, lease, rev int64) {
		kv := &mvccpb.KeyValue{Key: []byte(name), Value: value, Lease: lease, CreateRevision: rev}
		tok, label, err := checkEntry(q, kv, false)
		if err != nil {
			var fr *leasehold.ForeignRecordError
			switch {
			case errors.As(err, &fr):
				if fr.Object != name || fr.Reason == "" || !errors.Is(err, leasehold.ErrForeignRecord) {
					t.Fatalf("checkEntry(%q): %v does not name the entry and the problem", name, err)
				}
			case errors.Is(err, leasehold.ErrTokensExhausted):
				if rev >= 0 || !strings.Contains(err.Error(), name) {
					t.Fatalf("checkEntry(%q, revision %d): %v", name, rev, err)
				}
			default:
				t.Fatalf("checkEntry(%q): %v is neither foreign nor exhausted", name, err)
			}
			return
		}
		id, slot, perr := parseEntryName(strings.TrimPrefix(name, q))
		if rev <= 0 || tok != uint64(rev) || perr != nil || clientv3.LeaseID(lease) != id || EntryKey("", "k", id, slot) != name {
			t.Fatalf("checkEntry(%q, lease %x, revision %d) accepted with token %d", name, lease, rev, tok)
		}
		if _, l2, err := decodeValue(value); err != nil || l2 != label {
			t.Fatalf("checkEntry(%q) accepted the value %q with label %q", name, value, label)
		}
	})
}

// FuzzCheckURL: parseURL never panics; a refusal never shows the URL's
// password; an accepted URL, written back from what was parsed, parses to
// the same configuration.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"etcd://127.0.0.1:2379", "etcd://a:1,b:2/locks?idle=1s&dial_timeout=2s",
		"etcd://user:secretpw@h:1/p/", "etcd://u:sec%zzret@h:1", "etcd://h:1?idle=soon", "etcd://h", "etcd://", "redis://h:1",
		"etcd://u:p%2Fw@h:1/a%2Fb?idle=-1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, opts, err := parseURL(raw)
		if err != nil {
			// The password counts as shown only where the rest of the URL,
			// quoted as the message quotes it, cannot spell it too ("\x80" + "00").
			_, pw := userInfo(raw)
			rest := strconv.Quote(strings.Replace(raw, pw, "", 1))
			if len(pw) >= 4 && strings.Count(raw, pw) == 1 && !strings.Contains(rest, pw) && strings.Contains(err.Error(), pw) {
				t.Fatalf("parseURL(%q): %q shows the password", raw, err)
			}
			return
		}
		if len(cfg.Endpoints) == 0 || cfg.DialTimeout <= 0 || opts.Prefix != "" && !strings.HasSuffix(opts.Prefix, "/") {
			t.Fatalf("parseURL(%q) = %v, %+v", raw, cfg.Endpoints, opts)
		}
		var b strings.Builder
		b.WriteString("etcd://")
		if cfg.Username != "" || cfg.Password != "" {
			b.WriteString(url.PathEscape(cfg.Username) + ":" + url.PathEscape(cfg.Password) + "@")
		}
		for i, e := range cfg.Endpoints {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimPrefix(e, "http://"))
		}
		b.WriteString("/" + url.PathEscape(opts.Prefix))
		b.WriteString("?idle=" + url.QueryEscape(opts.IdleTimeout.String()) + "&dial_timeout=" + url.QueryEscape(cfg.DialTimeout.String()))
		cfg2, opts2, err := parseURL(b.String())
		if err != nil || strings.Join(cfg2.Endpoints, ",") != strings.Join(cfg.Endpoints, ",") || cfg2.Username != cfg.Username ||
			cfg2.Password != cfg.Password || cfg2.DialTimeout != cfg.DialTimeout || opts2 != opts {
			t.Fatalf("parseURL(%q) = %v %q %v %+v; written back as %q: %v %q %v %+v, %v", raw, cfg.Endpoints, cfg.Username, cfg.DialTimeout, opts,
				b.String(), cfg2.Endpoints, cfg2.Username, cfg2.DialTimeout, opts2, err)
		}
	})
}

// userInfo returns the user and password of an etcd:// URL as parseURL
// finds them (unescaped as far as they can be), or "".
func userInfo(raw string) (user, pw string) {
	rest, ok := strings.CutPrefix(raw, "etcd://")
	if !ok {
		return "", ""
	}
	rest, _, _ = strings.Cut(rest, "?")
	hosts, _, _ := strings.Cut(rest, "/")
	at := strings.LastIndex(hosts, "@")
	if at < 0 {
		return "", ""
	}
	user, pw, _ = strings.Cut(hosts[:at], ":")
	return user, pw
}
