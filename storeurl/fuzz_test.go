package storeurl

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzStoreURL runs every store's URL parser through the store table: the
// input as given and with each scheme in place of its own, through check
// (Open's parse, lookup and the row's CheckURL, which contact nothing).
// Properties: no panic; the same answer twice; an accepted URL's row owns
// its scheme and its CheckURL accepts it; an error is exactly one of
// ErrBadURL (a URL that cannot be parsed or has no scheme, or that the
// row's parser refuses) and ErrUnknownScheme (a parsed URL whose scheme
// names no row); an error never shows the URL's password.
func FuzzStoreURL(f *testing.F) {
	for _, k := range Stores() {
		for _, u := range k.URLs {
			f.Add(u)
		}
	}
	for _, u := range []string{
		"", " ", "sqlite:rel/x.db", "sqlite:///tmp/x.db?busy_timeout=5s", "memory:", "MEMORY://",
		"redis://u:s3cretpw@127.0.0.1:1/0?prefix=%zz", "rediss://:s3cretpw@h:notaport/0",
		"redlock://u:s3cretpw@h:1,h/0", "postgres://u:s3cretpw@h/db?mode=bogus",
		"etcd://u:s3cretpw@127.0.0.1", "consul://u:s3cretpw@h:8500", "zk://u:s3cretpw@h",
		"azblob://u:s3cretpw@acct/c/d", "s3://u:s3cretpw@b?nosuch=1", "sqlite://u:s3cretpw@/x.db",
		"memory://u:s3cretpw@", "nosuch://u:s3cretpw@[::1", "file://localhost/x.db#frag", "%zz://x",
		"zk://h:1/zookeeper", "s3://b?endpoint=127.0.0.1:7070", "sqlite://u:p%41ssw0rd@/x.db",
		"kube://u:s3cretpw@/ns", "kube://in-cluster/ns?kubeconfig=/x", "kube:///Bad_NS?context=c",
		"leasehold+https://h:1/p?cert_file=c&key_file=k&ca_file=a&server=h2:2&server=[::1]:3",
		"leasehold+https://u:s3cretpw@h:1?server=h2", "leasehold+http://h:1?key_file=k&server=:1",
	} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkURLProperties(t, raw)
		if _, rest, ok := strings.Cut(raw, ":"); ok {
			for _, s := range Schemes() {
				checkURLProperties(t, s+":"+rest)
			}
		}
	})
}

// checkURLProperties checks FuzzStoreURL's properties for one URL.
func checkURLProperties(t *testing.T, raw string) {
	k, u, err := check(raw)
	k2, _, err2 := check(raw)
	if (err == nil) != (err2 == nil) || k.Name != k2.Name {
		t.Fatalf("check(%q) answered %q, %v then %q, %v", raw, k.Name, err, k2.Name, err2)
	}
	parsed, perr := url.Parse(raw)
	if err == nil {
		if row, ok := Lookup(u.Scheme); !ok || row.Name != k.Name || k.CheckURL(raw) != nil {
			t.Fatalf("check(%q) accepted it for row %q, whose scheme or CheckURL disagree", raw, k.Name)
		}
		return
	}
	bad, unknown := errors.Is(err, ErrBadURL), errors.Is(err, ErrUnknownScheme)
	if bad == unknown {
		t.Fatalf("check(%q): %v; want exactly one of ErrBadURL and ErrUnknownScheme", raw, err)
	}
	if perr != nil || parsed.Scheme == "" || strings.TrimSpace(raw) == "" {
		if !bad {
			t.Fatalf("check(%q): %v; an unparsable URL or one without a scheme is ErrBadURL", raw, err)
		}
	} else if _, known := Lookup(parsed.Scheme); known == unknown {
		t.Fatalf("check(%q): %v; the scheme %q is known: %v", raw, err, parsed.Scheme, known)
	}
	if perr == nil && parsed.User != nil {
		pw, _ := parsed.User.Password()
		for _, s := range []string{pw, rawPassword(raw)} {
			if distinctive(s, raw) && strings.Contains(err.Error(), s) {
				t.Fatalf("check(%q): error %q shows the password %q", raw, err, s)
			}
		}
	}
}

// distinctive reports whether a password s is long enough, and appears in
// raw only once (in its userinfo) and in no fixed text of the messages,
// for its presence in an error to mean that the error shows it.
func distinctive(s, raw string) bool {
	if len(s) < 6 || strings.Count(raw, s) > 1 || strings.Contains(supported(), s) {
		return false
	}
	if dec, err := url.PathUnescape(raw); err == nil && strings.Count(dec, s) > 1 {
		return false
	}
	// The rest of the URL, quoted as messages quote it, may spell it too
	// ("\x00" + "0000"): zookeeper's FuzzCheckURL found that.
	if strings.Contains(strconv.Quote(strings.Replace(raw, s, "", 1)), s) {
		return false
	}
	return true
}
