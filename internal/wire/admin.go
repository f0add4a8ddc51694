package wire

// BreakRequest is the body of POST /v1/admin/break: the key whose lease to
// end, and, if not zero, the token the caller saw (the break is refused
// when another grant holds the key by then, so an admin never ends a lease
// they have not seen).
type BreakRequest struct {
	Key   string `json:"key"`
	Token uint64 `json:"token,string,omitempty"`
}
