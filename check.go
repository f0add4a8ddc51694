package leasehold

import "fmt"

// The checks a Store makes at its entry points. Client validates every key
// and TTL before a store sees them, but a Store is a public contract that
// tools call directly (the CLI's one-shot renew and release, a user's own
// client), so each store also calls exactly one of these as the first line
// of each method, and nothing else: the bounds and the error messages live
// here, once. The conformance suite (leasetest's bad-input rule) calls the
// store directly with bad input, so a store that forgets is caught.

// CheckAcquire is the check at the top of Store.Acquire: the key (see
// [ValidateKey]), the TTL against info (see [ValidateTTL]) and a non-empty
// owner. Errors wrap ErrInvalidKey or ErrInvalidTTL.
func CheckAcquire(req AcquireRequest, info Info) error {
	if err := ValidateKey(req.Key); err != nil {
		return err
	}
	if err := ValidateTTL(req.TTL, info); err != nil {
		return err
	}
	if req.Owner == "" {
		return fmt.Errorf("%w: key %q: the owner id is empty", ErrInvalidKey, req.Key)
	}
	return nil
}

// CheckRenew is the check at the top of Store.Renew (and of each grant of a
// RenewMany): the key, the TTL against info, and a grant that could be held.
// A grant with an empty owner or a zero token matches no lease (zero is
// never granted), so it is ErrNotHeld, as a store would answer; it must not
// reach a store query where it could match more than it should.
func CheckRenew(g Grant, info Info) error {
	if err := ValidateKey(g.Key); err != nil {
		return err
	}
	if err := ValidateTTL(g.TTL, info); err != nil {
		return err
	}
	return checkHeldShape("renew", g)
}

// CheckRelease is the check at the top of Store.Release: the key, and a
// grant that could be held (see CheckRenew).
func CheckRelease(g Grant) error {
	if err := ValidateKey(g.Key); err != nil {
		return err
	}
	return checkHeldShape("release", g)
}

// CheckHolder is the check at the top of Store.Holder: the key.
func CheckHolder(key string) error { return ValidateKey(key) }

func checkHeldShape(op string, g Grant) error {
	switch {
	case g.Token == 0:
		return fmt.Errorf("%s %q: token 0 is never granted: %w", op, g.Key, ErrNotHeld)
	case g.Owner == "":
		return fmt.Errorf("%s %q: the owner id is empty: %w", op, g.Key, ErrNotHeld)
	}
	return nil
}
