package serve

// The bounds of an acquire's owner id, in bytes. The owner id is the only
// proof of ownership renew and release check (any client whose token may
// renew or release a key could otherwise guess a short one), so the server
// refuses one too short to be a random id of 128 bits; the upper bound
// keeps what the server keeps per grant small.
const (
	MinOwnerLen = 16
	MaxOwnerLen = 256
)

// checkOwner refuses an owner id outside [MinOwnerLen, MaxOwnerLen] bytes,
// without repeating it.
func checkOwner(owner string) error {
	if n := len(owner); n < MinOwnerLen || n > MaxOwnerLen {
		return badRequest("owner: %d bytes; an owner id is %d to %d bytes, a random id of at least 128 bits (e.g. 32 hex digits) fresh for each acquire: it is the proof of ownership that renew and release check", n, MinOwnerLen, MaxOwnerLen)
	}
	return nil
}
