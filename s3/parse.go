package s3

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
)

// The bounds of what the store reads back. Every value read from the
// server is checked against them before it is used, so that a planted or
// corrupted object is refused (a *leasehold.ForeignRecordError naming it)
// and the arithmetic on what is accepted cannot overflow: a lease's expiry
// is its Last-Modified plus at most a day, and a token is at most 2^64-1
// and is never raised past it.
const (
	minTTLms = int64(MinTTL / time.Millisecond) // a lease's ttl_ms
	maxTTLms = int64(MaxTTL / time.Millisecond)
	ownerLen = 32 // hex digits of ownerHash
	writeLen = 16 // hex digits of nonce
	// maxAhead is how far an object's Last-Modified may be after the
	// server's Date (servers' Date lags their clock by up to a second).
	maxAhead = MaxTTL
	// maxReason bounds the part of a refused value quoted in its reason.
	maxReason = 120
)

// The server times the store accepts (Date, Last-Modified): a server whose
// clock says otherwise is wrong, and a time before 1970 would make the
// token floor (µs since 1970) wrap.
var (
	minServerTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxServerTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// foreign is the error for a value read back from object name that is
// not one the store wrote.
func foreign(name, format string, a ...any) error {
	return &leasehold.ForeignRecordError{Object: name, Reason: fmt.Sprintf(format, a...)}
}

// clip shortens a quoted value for a reason.
func clip(s string) string {
	if len(s) > maxReason {
		return s[:maxReason] + "..."
	}
	return s
}

// parseRecord parses body, read from object name, as the store's record
// of key of one of kinds, and checks every field (checkRecord). Anything
// else is refused as foreign: a body too large, not JSON, with unknown
// fields or trailing data.
func parseRecord(name, key string, body []byte, kinds ...string) (record, error) {
	if len(body) > maxBody {
		return record{}, foreign(name, "its body is over %d bytes; the store's records are a few hundred", maxBody)
	}
	var r record
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return record{}, foreign(name, "its body is not the store's JSON: %s", clip(err.Error()))
	}
	if _, err := dec.Token(); err != io.EOF {
		return record{}, foreign(name, "its body has data after the store's JSON")
	}
	if reason := checkRecord(r, key, kinds); reason != "" {
		return record{}, foreign(name, "%s", reason)
	}
	return r, nil
}

// checkRecord says what is wrong with r as a record of key of one of
// kinds; "" when nothing is.
func checkRecord(r record, key string, kinds []string) string {
	switch {
	case r.Leasehold != format:
		return fmt.Sprintf(`"leasehold" is %d, not %d (missing, or another format)`, r.Leasehold, format)
	case r.Key != key:
		return fmt.Sprintf("it is the record of key %q, not %q", clip(r.Key), clip(key))
	case !slices.Contains(kinds, r.Kind):
		return fmt.Sprintf("kind %q where a %s record belongs", clip(r.Kind), strings.Join(kinds, " or "))
	case r.Token == 0:
		return "token 0 or missing (the store's tokens start at 1)"
	case !isHex(r.Write, writeLen):
		return fmt.Sprintf("write %q is not %d hex digits", clip(r.Write), writeLen)
	case r.Kind == kindLease && !isHex(r.Owner, ownerLen):
		return fmt.Sprintf("owner %q is not %d hex digits", clip(r.Owner), ownerLen)
	case r.Kind == kindLease && (r.TTLms < minTTLms || r.TTLms > maxTTLms):
		return fmt.Sprintf("ttl_ms %d is outside the store's TTLs, %d to %d", r.TTLms, minTTLms, maxTTLms)
	case r.Kind != kindLease && (r.Owner != "" || r.Label != "" || r.TTLms != 0):
		return fmt.Sprintf("a %s record with an owner, a label or a ttl_ms", r.Kind)
	case r.Kind == kindCounter && r.Ceiling != 0:
		return "a counter record with a ceiling"
	case r.Ceiling != 0 && r.Ceiling < r.Token:
		return fmt.Sprintf("ceiling %d is below its token %d", r.Ceiling, r.Token)
	}
	return ""
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// parseObject is what a read of object name found: its body parsed as a
// record of key of one of kinds, with the response's ETag and
// Last-Modified, checked against the server's time now (from the same
// response, already checked by serverDate).
func parseObject(name, key string, body []byte, etag *string, lastModified *time.Time, now time.Time, kinds ...string) (*object, error) {
	rec, err := parseRecord(name, key, body, kinds...)
	if err != nil {
		return nil, err
	}
	if etag == nil || *etag == "" || lastModified == nil {
		return nil, errNoVersion
	}
	lm := *lastModified
	switch {
	case lm.Before(minServerTime) || !lm.Before(maxServerTime):
		return nil, foreign(name, "its Last-Modified %s is outside %d to %d", lm.Format(time.RFC3339), minServerTime.Year(), maxServerTime.Year()-1)
	case lm.After(now.Add(maxAhead)):
		return nil, foreign(name, "its Last-Modified %s is more than %s after the server's Date %s", lm.Format(time.RFC3339), maxAhead, now.Format(time.RFC3339))
	}
	return &object{rec: rec, etag: *etag, lastModified: lm}, nil
}

// serverDate is the server's time from the Date header of a response to
// a read of object name: errNoDate without one, and a refusal naming the
// object when it is not an HTTP date from 2000 to 9999.
func serverDate(name string, h http.Header) (time.Time, error) {
	v := h.Get("Date")
	if v == "" {
		return time.Time{}, errNoDate
	}
	t, err := http.ParseTime(v)
	switch {
	case err != nil:
		return time.Time{}, foreign(name, "the server's Date header %q is not an HTTP date", clip(v))
	case t.Before(minServerTime) || !t.Before(maxServerTime):
		return time.Time{}, foreign(name, "the server's Date header %q is outside %d to %d", v, minServerTime.Year(), maxServerTime.Year()-1)
	}
	return t, nil
}

// nextToken is a new token for a key whose lease object's token is last
// and whose counter is counter: one more than the larger, and at least
// the server's time now in µs. It is false when the larger is already
// the largest token (2^64-1): the key's tokens are exhausted.
func nextToken(last, counter uint64, now time.Time) (uint64, bool) {
	hi := max(last, counter)
	if hi == math.MaxUint64 {
		return 0, false
	}
	return max(hi+1, uint64(max(now.UnixMicro(), 0))), true
}
