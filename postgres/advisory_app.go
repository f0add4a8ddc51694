package postgres

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
