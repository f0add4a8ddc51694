package fence

import "net/http"

// RoundTripper is an [http.RoundTripper] that stamps the fencing token of each
// request's context ([TokenFrom]) into its [Header] before passing it to
// Base. The token replaces any Fencing-Token header the request already
// has. A request whose context carries no token is passed on unchanged.
//
// It never modifies the caller's request: it sends a clone. Its zero value
// sends through [http.DefaultTransport].
//
//	client := &http.Client{Transport: &fence.RoundTripper{}}
//	// ctx is the lease's context, or fence.WithToken(ctx, token)
//	req, _ := http.NewRequestWithContext(ctx, "PUT", url, body)
//	resp, err := client.Do(req) // sent with Fencing-Token: <token>
type RoundTripper struct {
	// Base sends the requests. nil means http.DefaultTransport.
	Base http.RoundTripper
}

// RoundTrip implements [http.RoundTripper].
func (t *RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	token, ok := TokenFrom(req.Context())
	if !ok {
		return base.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	out.Header.Set(Header, FormatToken(token))
	return base.RoundTrip(out)
}
