package azblob

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold"
)

// maxQuoted bounds the part of a refused value quoted in a reason.
const maxQuoted = 120

// The server times the store accepts (the Date header): a server whose
// clock says otherwise is wrong, and a time before 1970 would make the
// token floor (µs since 1970) wrap.
var (
	minServerTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxServerTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// blobState is what a read of one of the store's blobs found, checked.
type blobState struct {
	token   uint64 // 0: a lease blob that no acquire has stamped yet
	ceiling uint64 // a value the counter was raised to, at or above token; 0: unknown
	label   string
	leased  bool // the lease state is "leased"
	etag    azcore.ETag
	date    time.Time // the server's, from the response's Date header
}

// foreign is the error for a value read back from blob name that is not
// one the store wrote.
func foreign(name, format string, a ...any) error {
	return &leasehold.ForeignRecordError{Object: name, Reason: fmt.Sprintf(format, a...)}
}

func clip(s string) string {
	if len(s) > maxQuoted {
		return s[:maxQuoted] + "..."
	}
	return s
}

// parseBlob checks the properties read of blob name, the key's lease blob
// or (counter) its counter blob: the metadata (parseMeta), the ETag, the
// server's Date and the lease state. p is not nil.
func parseBlob(name string, p *blob.GetPropertiesResponse, counter bool) (blobState, error) {
	tok, label, err := parseMeta(name, p.Metadata, counter)
	if err != nil {
		return blobState{}, err
	}
	st := blobState{token: tok, label: label}
	if st.ceiling, err = parseCeiling(name, p.Metadata, tok, counter); err != nil {
		return blobState{}, err
	}
	if p.ETag == nil || *p.ETag == "" {
		return blobState{}, foreign(name, "the server sent no ETag for it")
	}
	st.etag = *p.ETag
	if st.date, err = parseDate(name, p.Date); err != nil {
		return blobState{}, err
	}
	st.leased, err = parseLeaseState(name, p.LeaseState)
	return st, err
}

// parseMeta checks a blob's metadata as the store writes it: "leasehold"
// is "1"; "token" is a decimal token from 1 to 2^64-1 written as the store
// writes it (no sign, no leading zeros), required on a counter blob and
// absent on a lease blob only until its first acquire stamps it; "label"
// only on a lease blob. Azure compares metadata names without case, so a
// name given twice in different cases is refused; other names are left
// alone (they are not the store's, and it reads none of them).
func parseMeta(name string, m map[string]*string, counter bool) (tok uint64, label string, err error) {
	seen := map[string]string{}
	for k, v := range m {
		lk := strings.ToLower(k)
		if _, dup := seen[lk]; dup {
			return 0, "", foreign(name, "metadata %q is given twice", clip(lk))
		}
		if v == nil {
			return 0, "", foreign(name, "metadata %q has no value", clip(lk))
		}
		seen[lk] = *v
	}
	if v, ok := seen[metaMark]; !ok || v != "1" {
		return 0, "", foreign(name, "metadata %q is %q, not \"1\" (someone else's blob at that name)", metaMark, clip(v))
	}
	v, ok := seen[metaToken]
	switch {
	case ok:
		if tok, err = parseToken(name, v); err != nil {
			return 0, "", err
		}
	case counter:
		return 0, "", foreign(name, "a counter blob without a %q", metaToken)
	}
	label, hasLabel := seen[metaLabel]
	switch {
	case counter && hasLabel:
		return 0, "", foreign(name, "a counter blob with a %q", metaLabel)
	case !ok && hasLabel:
		return 0, "", foreign(name, "a %q without a %q", metaLabel, metaToken)
	}
	return tok, label, nil
}

// parseCeiling checks the "ceiling" metadata of blob name, whose token is
// tok: a token (parseToken) at or above tok, only on a lease blob with a
// token; 0 when there is none. parseMeta has refused names given twice.
func parseCeiling(name string, m map[string]*string, tok uint64, counter bool) (uint64, error) {
	var v *string
	for k, kv := range m {
		if strings.EqualFold(k, metaCeiling) {
			v = kv
		}
	}
	switch {
	case v == nil:
		return 0, nil
	case counter || tok == 0:
		return 0, foreign(name, "a %q on a counter blob or without a %q", metaCeiling, metaToken)
	}
	c, err := parseToken(name, *v)
	if err != nil {
		return 0, err
	}
	if c < tok {
		return 0, foreign(name, "ceiling %d is below its token %d", c, tok)
	}
	return c, nil
}

// parseToken parses a token's metadata value of blob name.
func parseToken(name, v string) (uint64, error) {
	tok, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err != nil:
		return 0, foreign(name, "token %q is not a decimal number from 1 to %d", clip(v), uint64(math.MaxUint64))
	case tok == 0:
		return 0, foreign(name, "token 0 (the store's tokens start at 1)")
	case strconv.FormatUint(tok, 10) != v:
		return 0, foreign(name, "token %q is not written as the store writes it (%d)", clip(v), tok)
	}
	return tok, nil
}

// parseDate checks the server's Date of a response about blob name.
func parseDate(name string, d *time.Time) (time.Time, error) {
	switch {
	case d == nil:
		return time.Time{}, foreign(name, "the server's response has no Date header (the store needs the server's clock)")
	case d.Before(minServerTime) || !d.Before(maxServerTime):
		return time.Time{}, foreign(name, "the server's Date %s is outside %d to %d", d.Format(time.RFC3339), minServerTime.Year(), maxServerTime.Year()-1)
	}
	return *d, nil
}

// parseLeaseState reports whether a blob's lease state is "leased"; a
// missing or unknown state is refused.
func parseLeaseState(name string, s *lease.StateType) (bool, error) {
	if s == nil {
		return false, foreign(name, "the server sent no lease state for it")
	}
	switch *s {
	case lease.StateTypeLeased:
		return true, nil
	case lease.StateTypeAvailable, lease.StateTypeBreaking, lease.StateTypeBroken, lease.StateTypeExpired:
		return false, nil
	}
	return false, foreign(name, "lease state %q is not one of Azure's", clip(string(*s)))
}

// nextToken is a new token for a key whose lease blob's token is last and
// whose counter is counter: one more than the larger, and at least the
// server's time now in µs, so that a token cannot repeat even when both
// blobs are deleted (past the second of the key's last grant: Date is
// whole seconds). It is false when the larger is already the largest
// token (2^64-1): the key's tokens are exhausted.
func nextToken(last, counter uint64, now time.Time) (uint64, bool) {
	hi := max(last, counter)
	if hi == math.MaxUint64 {
		return 0, false
	}
	return max(hi+1, uint64(max(now.UnixMicro(), 0))), true
}
