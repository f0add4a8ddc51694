package consul

import (
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// FuzzParseEntry: whatever a KV entry holds, parseEntry does not panic; a
// value it accepts is leasehold's (Flags, a non-zero ModifyIndex, an owner
// tag of 32 lower-case hex digits, a non-zero token, a session TTL and a
// lock-delay within Consul's bounds) and survives a round trip; one it
// refuses becomes a ForeignRecordError naming the entry; and the next token
// after it is greater, or refused at the limit (never wraps).
func FuzzParseEntry(f *testing.F) {
	f.Add([]byte(`{"token":1795735294023353,"owner":"00112233445566778899aabbccddeeff","label":"w","session_ttl_ms":10000,"lock_delay_ms":2000}`), Flags, uint64(42))
	f.Add([]byte(`{"owner":"00112233445566778899aabbccddeeff","label":"legacy"}`), Flags, uint64(7))
	f.Add([]byte(`{"token":18446744073709551615,"owner":"00112233445566778899aabbccddeeff"}`), Flags, uint64(1))
	f.Add([]byte(`{"token":18446744073709551616,"owner":"00112233445566778899aabbccddeeff"}`), Flags, uint64(1))
	f.Add([]byte(`{"token":5,"owner":"00112233445566778899AABBCCDDEEFF"}`), Flags, uint64(1))
	f.Add([]byte(`{"token":5,"owner":"00112233445566778899aabbccddeeff","lock_delay_ms":-1}`), Flags, uint64(1))
	f.Add([]byte(`{"token":5,"owner":"00112233445566778899aabbccddeeff"}{}`), Flags, uint64(1))
	f.Add([]byte("hello"), uint64(0), uint64(3))
	f.Add([]byte(nil), Flags, uint64(0))
	f.Fuzz(func(t *testing.T, raw []byte, flags, index uint64) {
		kv := &api.KVPair{Key: "leasehold/k", Value: raw, Flags: flags, ModifyIndex: index}
		v, err := parseEntry(kv)
		if _, ok := decodeEntry(kv); ok != (err == nil) {
			t.Fatalf("decodeEntry and parseEntry disagree on %q: %v", raw, err)
		}
		if err != nil {
			fe := foreignEntry("acquire", "k", kv, err)
			var fr *leasehold.ForeignRecordError
			var se *leasehold.StoreError
			if err.Error() == "" || !errors.As(fe, &fr) || !errors.As(fe, &se) || !strings.Contains(fr.Object, kv.Key) {
				t.Fatalf("refusal of %q: %v", raw, fe)
			}
			return
		}
		if flags != Flags || index == 0 || v.Token == 0 || len(v.Owner) != 32 || strings.Trim(v.Owner, "0123456789abcdef") != "" ||
			v.SessionTTLMS < 0 || v.SessionTTLMS > MaxSessionTTL.Milliseconds() || v.LockDelayMS < 0 || v.LockDelayMS > MaxLockDelay.Milliseconds() {
			t.Fatalf("accepted %q (flags %#x, index %d) as %+v", raw, flags, index, v)
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if w, err := parseEntry(&api.KVPair{Key: kv.Key, Value: again, Flags: flags, ModifyIndex: index}); err != nil || w != v {
			t.Fatalf("round trip of %+v: %+v, %v", v, w, err)
		}
		next, ok := nextToken(max(v.Token, index), 0, 0)
		if ok != (max(v.Token, index) != math.MaxUint64) || (ok && next <= v.Token) {
			t.Fatalf("next token after %d (index %d): %d, %v", v.Token, index, next, ok)
		}
	})
}

// FuzzParseURL: parseURL does not panic, agrees with CheckURL, gives an
// agent address that is host:port and a prefix that is empty or ends in
// '/', and never shows the ACL token in an error or in redact's output.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"consul://127.0.0.1:8500", "consul://h", "consul://[::1]:8500/locks?token=s3cr3t-t0ken&dc=dc1&idle=30s",
		"consul://h:1//p", "consul://h:port", "consul://u:p@h:1", "consul://h:1?bogus=1", "consul://h:1?idle=soon",
		"consul://h:1?a=1;token=s3cr3t-t0ken", "consul://h:1/a%2", "consul://h:1?tok%65n=s3cr3t-t0ken&idle=x", "redis://x:1",
	} {
		f.Add(s)
	}
	f.Setenv(TokenEnv, "")
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := parseURL(raw)
		if (CheckURL(raw) == nil) != (err == nil) {
			t.Fatalf("CheckURL and parseURL disagree on %q", raw)
		}
		secrets := tokensIn(raw)
		shown := redact(raw)
		if err != nil {
			shown += " " + err.Error()
		} else {
			if p.token != "" {
				secrets = append(secrets, p.token)
			}
			if _, port, err := net.SplitHostPort(p.addr); err != nil || port == "" || (p.opts.Prefix != "" && !strings.HasSuffix(p.opts.Prefix, "/")) {
				t.Fatalf("%q: address %q, prefix %q", raw, p.addr, p.opts.Prefix)
			}
		}
		// A secret whose text also stands in the URL's public part (a
		// parameter's name, the host, the path: k%65n=?tok%65n=k%65n=)
		// cannot be told from it.
		public := publicPart(raw)
		for _, s := range secrets {
			if len(s) >= 6 && !strings.Contains(public, s) && strings.Contains(shown, s) {
				t.Fatalf("%q: the token %q is shown: %s", raw, s, shown)
			}
		}
	})
}

// tokensIn returns the values of the parameters of raw's query whose
// name, as Consul's client would read it, is "token".
// publicPart is raw without the values of its token parameters, worked
// out apart from redact (which the fuzz target checks).
func publicPart(raw string) string {
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	var b strings.Builder
	b.WriteString(base + "?")
	for i, part := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		if i > 0 {
			b.WriteByte('&')
		}
		k, _, _ := strings.Cut(part, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == "token" {
			part = k + "="
		}
		b.WriteString(part)
	}
	return b.String()
}

func tokensIn(raw string) []string {
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return nil
	}
	var out []string
	for _, part := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, _ := strings.Cut(part, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == "token" {
			out = append(out, v)
			if uv, err := url.QueryUnescape(v); err == nil {
				out = append(out, uv)
			}
		}
	}
	return out
}
