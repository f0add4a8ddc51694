package postgres

import (
	"strconv"
	"strings"
	"time"
)

// How an AdvisoryStore's holder publishes itself. The server knows only the
// lock id; the holding session's application_name says the rest, and
// Holder reads it through pg_locks and pg_stat_activity.

// appLabel makes a label fit application_name: printable ASCII only (the
// server replaces anything else with '?' anyway).
func appLabel(label string) string {
	b := []byte(label)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return string(b)
}

// holderApp is what a holder's application_name says: "lh1 <check> <token>
// <expiry unix ms> <label>", cut to 63 bytes.
type holderApp struct {
	check    string
	token    uint64
	expiryMS int64
	label    string
}

func parseHolderApp(app string) (holderApp, bool) {
	f := strings.SplitN(app, " ", 5)
	if len(f) < 4 || f[0] != "lh1" {
		return holderApp{}, false
	}
	tok, err1 := strconv.ParseUint(f[2], 10, 64)
	exp, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return holderApp{}, false
	}
	h := holderApp{check: f[1], token: tok, expiryMS: exp}
	if len(f) == 5 {
		h.label = f[4]
	}
	return h, true
}

func (h holderApp) remaining(nowMS int64) time.Duration {
	if d := h.expiryMS - nowMS; d > 0 {
		return time.Duration(d) * time.Millisecond
	}
	return 0
}
