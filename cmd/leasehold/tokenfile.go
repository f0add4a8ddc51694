package main

import (
	"flag"
	"net/url"
	"strings"
)

// tokenFileValue is the --token-file of a command that takes leases: the
// file of the bearer token for the leasehold server that --store names.
type tokenFileValue struct{ path string }

func (v *tokenFileValue) String() string {
	if v == nil {
		return ""
	}
	return v.path
}

func (v *tokenFileValue) Set(s string) error { v.path = s; return nil }

// clientStoreFlag defines --store and --token-file, for a command that
// takes leases from the store.
func clientStoreFlag(fs *flag.FlagSet) *string {
	fs.Var(&tokenFileValue{}, "token-file", "the bearer token's file, for a leasehold server's --store URL")
	return storeFlag(fs)
}

// withTokenFile puts a parsed --token-file into the store URL, as its
// token_file parameter, so that opening the store reads it. It is for a
// leasehold server only (leasehold+https://, leasehold+http://): any
// other store is refused (its credentials go in its own URL or
// environment, and a token silently unused would hide a mistake), as is a
// URL that names its own token_file too. Its errors show neither the URL
// (it may hold another store's password) nor the token.
func withTokenFile(fs *flag.FlagSet) error {
	f := fs.Lookup("token-file")
	if f == nil {
		return nil
	}
	v, ok := f.Value.(*tokenFileValue)
	if !ok || v.path == "" {
		return nil
	}
	raw, err := storeURL(fs.Lookup("store").Value.String())
	if err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || !strings.HasPrefix(u.Scheme, "leasehold+http") {
		scheme, _, _ := strings.Cut(raw, ":")
		return usagef("--token-file %s is for a leasehold server's store URL (leasehold+https://HOST:PORT); the store here is a %s: URL, whose credentials go in its own URL or environment", v.path, scheme)
	}
	q, err := url.ParseQuery(u.RawQuery)
	switch {
	case err != nil:
		return nil // the store's own check names what is wrong
	case q.Has("token_file"):
		return usagef("--token-file %s and the store URL's token_file %s: give the token file once", v.path, q.Get("token_file"))
	}
	q.Set("token_file", v.path)
	u.RawQuery = q.Encode()
	return fs.Set("store", u.String())
}
