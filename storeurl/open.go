package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/leasehold-go/leasehold"
)

// Errors reported by Open, before any store is contacted. Check them with
// errors.Is; the message lists the supported schemes.
var (
	// ErrBadURL: the store URL is empty, has no scheme or cannot be parsed.
	ErrBadURL = errors.New("storeurl: malformed store URL")
	// ErrUnknownScheme: the URL's scheme names no store.
	ErrUnknownScheme = errors.New("storeurl: unknown store URL scheme")
)

// Open opens the store that rawURL names; see the package documentation for
// the schemes. The caller closes the store. Errors: ErrBadURL and
// ErrUnknownScheme (both listing the supported schemes), or the store's own
// error (a *leasehold.StoreError for a file or server it cannot use, with
// the store's description of what is wrong with the rest of the URL).
func Open(ctx context.Context, rawURL string) (leasehold.Store, error) {
	k, u, err := check(rawURL)
	if err != nil {
		return nil, err
	}
	s, err := k.Open(ctx, rawURL, u)
	if err != nil {
		// A row's opener that returned a typed nil (*Store)(nil) with its
		// error would make a non-nil Store whose Close panics: the caller
		// gets nil with every error.
		return nil, err
	}
	return s, nil
}

// openWith makes a row's opener of a store's OpenURL. On error it returns
// a nil Store, never the store's typed nil pointer in a non-nil interface
// (whose Close would panic).
func openWith[S leasehold.Store](open func(context.Context, string) (S, error)) func(context.Context, string, *url.URL) (leasehold.Store, error) {
	return func(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
		s, err := open(ctx, rawURL)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// check parses rawURL, finds its row and runs the row's CheckURL, without
// contacting anything. Its errors wrap ErrBadURL or ErrUnknownScheme and
// never show the URL's password.
func check(rawURL string) (Kind, *url.URL, error) {
	u, err := parse(rawURL)
	if err != nil {
		return Kind{}, nil, err
	}
	k, err := lookup(u)
	if err != nil {
		return Kind{}, nil, err
	}
	if err := k.CheckURL(rawURL); err != nil {
		return Kind{}, nil, fmt.Errorf("%w: %s", ErrBadURL, hidePassword(err.Error(), rawURL, u))
	}
	return k, u, nil
}

// hidePassword replaces the password of rawURL (parsed as u) in msg, a
// store's parser's message that may quote the URL, by "xxxxx" (as
// url.URL.Redacted writes it): decoded, escaped, and as rawURL spells it.
func hidePassword(msg, rawURL string, u *url.URL) string {
	pw, ok := u.User.Password()
	if !ok {
		return msg
	}
	for _, s := range []string{rawPassword(rawURL), pw, url.QueryEscape(pw), url.PathEscape(pw)} {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}

// rawPassword is the password part of rawURL's userinfo as written.
func rawPassword(rawURL string) string {
	rest, _, _ := strings.Cut(rawURL, "#")
	rest, _, _ = strings.Cut(rest, "?")
	_, rest, ok := strings.Cut(rest, "//")
	if !ok {
		return ""
	}
	authority, _, _ := strings.Cut(rest, "/")
	i := strings.LastIndex(authority, "@")
	if i < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(authority[:i], ":")
	return pw
}

// lookup returns the store table's row for u's scheme, refusing a store
// this binary was built without.
func lookup(u *url.URL) (Kind, error) {
	k, ok := Lookup(u.Scheme)
	if !ok {
		return Kind{}, fmt.Errorf("%w %q in %q; %s", ErrUnknownScheme, u.Scheme, u.Redacted(), supported())
	}
	if k.LeftOut {
		return Kind{}, leftOutError(k, u.Scheme)
	}
	return k, nil
}

// parse checks that rawURL is a URL with a scheme. Its errors never echo a
// URL that could not be parsed, since it may hold a password.
func parse(rawURL string) (*url.URL, error) {
	if strings.TrimSpace(rawURL) == "" {
		return nil, fmt.Errorf("%w: the URL is empty; %s", ErrBadURL, supported())
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %v; %s", ErrBadURL, err, supported())
	}
	if u.Scheme == "" {
		hint := ""
		if !strings.Contains(rawURL, "://") && u.User == nil { // the hint quotes rawURL: never a password
			hint = fmt.Sprintf(" (for a file, write %s)", fileHint(rawURL))
		}
		return nil, fmt.Errorf("%w: %q has no scheme%s; %s", ErrBadURL, u.Redacted(), hint, supported())
	}
	return u, nil
}

// fileHint suggests the sqlite URL of a bare path.
func fileHint(p string) string {
	if strings.HasPrefix(p, "/") {
		return "sqlite://" + p
	}
	return "sqlite:" + p
}

// supported is the list of schemes for error messages.
func supported() string {
	return "supported schemes: " + strings.Join(Schemes(), ", ")
}
