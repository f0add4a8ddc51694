package sqlite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"
)

// OpenURL opens the store named by rawURL, as Open does. It accepts exactly
// these forms (the path is percent-decoded):
//
//	sqlite:///abs/path.db           absolute path /abs/path.db
//	sqlite://localhost/abs/path.db  the same
//	sqlite:relative/path.db         path relative to the working directory
//	sqlite:/abs/path.db             absolute path
//	file:///abs/path.db             absolute path (also file:/abs/path.db and
//	                                file://localhost/abs/path.db)
//	file:relative/path.db           path relative to the working directory
//
// sqlite://relative/path.db is refused rather than guessed at: in a URL
// "relative" is a host name. The query may set busy_timeout to a Go
// duration ("?busy_timeout=5s", see Options.BusyTimeout); any other query
// parameter, a fragment, a user or a host other than localhost is an error.
func OpenURL(ctx context.Context, rawURL string) (*Store, error) {
	path, opts, err := ParseURL(rawURL)
	if err != nil {
		return nil, openErr(err)
	}
	return Open(ctx, path, opts)
}

// ParseURL returns the file path and options that OpenURL would use for
// rawURL, without opening anything.
func ParseURL(rawURL string) (string, *Options, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a password
		}
		return "", nil, fmt.Errorf("bad store URL: %w", err)
	}
	rawURL = u.Redacted() // the messages below quote the URL, never a password
	if u.Scheme != "sqlite" && u.Scheme != "file" {
		return "", nil, fmt.Errorf("store URL %q: scheme must be sqlite or file", rawURL)
	}
	if u.User != nil || u.Fragment != "" || u.RawFragment != "" {
		return "", nil, fmt.Errorf("store URL %q: a %s URL has no user or fragment", rawURL, u.Scheme)
	}
	var path string
	switch {
	case u.Opaque != "": // sqlite:relative/path.db
		path, err = url.PathUnescape(u.Opaque)
		if err != nil {
			return "", nil, fmt.Errorf("store URL %q: %w", rawURL, err)
		}
	case u.Host != "" && u.Host != "localhost":
		return "", nil, fmt.Errorf("store URL %q: host %q is not allowed (the file must be local); write %s:///abs/path.db for an absolute path or %s:relative/path.db for a relative one",
			rawURL, u.Host, u.Scheme, u.Scheme)
	default:
		path = u.Path
	}
	if path == "" || path == "/" {
		return "", nil, fmt.Errorf("store URL %q names no file", rawURL)
	}
	if path[len(path)-1] == '/' {
		return "", nil, fmt.Errorf("store URL %q names a directory, not a file", rawURL)
	}
	opts := &Options{}
	for k, vs := range u.Query() {
		switch k {
		case "busy_timeout":
			d, err := time.ParseDuration(vs[len(vs)-1])
			if err != nil || d <= 0 {
				return "", nil, fmt.Errorf("store URL %q: busy_timeout %q is not a positive duration such as 5s", rawURL, vs[len(vs)-1])
			}
			opts.BusyTimeout = d
		default:
			return "", nil, fmt.Errorf("store URL %q: unknown parameter %q (known: busy_timeout)", rawURL, k)
		}
	}
	return filepath.FromSlash(path), opts, nil
}
