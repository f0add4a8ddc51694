package redlock

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// URL is a parsed redlock URL:
// redlock://[[user]:password@]host:port,host:port,...[/db][?prefix=...].
// The user, password and database apply to every master.
type URL struct {
	Username, Password string
	Addrs              []string // host:port of each master
	DB                 int
	Prefix             string // Options.Prefix
}

// ParseURL parses a redlock URL. Query options other than prefix are
// refused.
func ParseURL(raw string) (URL, error) {
	var u URL
	rest, ok := strings.CutPrefix(raw, "redlock://")
	if !ok {
		return u, errors.New("URL does not start with redlock://")
	}
	rest, query, _ := strings.Cut(rest, "?")
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return u, fmt.Errorf("bad query: %w", err)
		}
		for k := range q {
			if k != "prefix" {
				return u, fmt.Errorf("unknown option %q (a redlock URL takes only prefix)", k)
			}
		}
		u.Prefix = q.Get("prefix")
	}
	hostPart, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(hostPart, "@"); i >= 0 {
		info, err := url.PathUnescape(hostPart[:i])
		if err != nil {
			return u, errors.New("bad user info")
		}
		u.Username, u.Password, _ = strings.Cut(info, ":")
		hostPart = hostPart[i+1:]
	}
	for _, h := range strings.Split(hostPart, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return u, fmt.Errorf("master %q is not host:port", h)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return u, fmt.Errorf("master %q has a bad port", h)
		}
		u.Addrs = append(u.Addrs, h)
	}
	if path != "" {
		db, err := strconv.Atoi(path)
		if err != nil || db < 0 {
			return u, fmt.Errorf("database %q is not a number", path)
		}
		u.DB = db
	}
	return u, nil
}
