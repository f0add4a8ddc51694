package wire

// MaxBatch is the most grants one POST /v1/renew-many renews; a client
// with more sends several.
const MaxBatch = 32

// MaxBatchBytes bounds the body of POST /v1/renew-many: MaxBatch grants
// with the longest keys.
const MaxBatchBytes = MaxBatch * 2 << 10

// RenewManyRequest is the body of POST /v1/renew-many: at most MaxBatch
// grants, each as POST /v1/renew takes it.
type RenewManyRequest struct {
	Grants []GrantRequest `json:"grants"`
}

// RenewManyResult is one grant's outcome: the renewed grant, or the
// status and error POST /v1/renew would have answered.
type RenewManyResult struct {
	Grant  *Grant     `json:"grant,omitempty"`
	Status int        `json:"status,omitempty"`
	Error  *ErrorBody `json:"error,omitempty"`
}

// RenewManyResponse is the answer of POST /v1/renew-many: one result per
// grant, in the order asked.
type RenewManyResponse struct {
	Results []RenewManyResult `json:"results"`
}
