package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"
)

// The JSON records, one per line. Latencies are in fractional
// milliseconds, durations in seconds, memory in bytes.

type cyclesJSON struct {
	Kind           string  `json:"kind"`
	Store          string  `json:"store"`
	Clients        int     `json:"clients"`
	Keys           string  `json:"keys"`
	DurationS      float64 `json:"duration_s"`
	Cycles         int64   `json:"cycles"`
	CyclesPerSec   float64 `json:"cycles_per_sec"`
	AcquireP50     float64 `json:"acquire_p50_ms"`
	AcquireP90     float64 `json:"acquire_p90_ms"`
	AcquireP99     float64 `json:"acquire_p99_ms"`
	AcquireMax     float64 `json:"acquire_max_ms"`
	ReleaseP50     float64 `json:"release_p50_ms"`
	ReleaseP99     float64 `json:"release_p99_ms"`
	Errors         int64   `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	Refused        int64   `json:"refused"`
	Holders        int     `json:"holders"`
	HoldsLost      int     `json:"holds_lost"`
	Renewals       int64   `json:"renewals"`
	RenewalsPerSec float64 `json:"renewals_per_sec"`
	RenewP50       float64 `json:"renew_p50_ms"`
	RenewP99       float64 `json:"renew_p99_ms"`
	HandoffN       int     `json:"handoff_n"`
	HandoffP50     float64 `json:"handoff_p50_ms"`
	HandoffP99     float64 `json:"handoff_p99_ms"`
	Partial        bool    `json:"partial"`
}

type scaleJSON struct {
	Kind         string  `json:"kind"`
	Store        string  `json:"store"`
	Held         int     `json:"held"`
	FillPerSec   float64 `json:"fill_per_sec"`
	AcquireP50   float64 `json:"acquire_p50_ms"`
	AcquireP99   float64 `json:"acquire_p99_ms"`
	ReleaseP50   float64 `json:"release_p50_ms"`
	ReleaseP99   float64 `json:"release_p99_ms"`
	CyclesPerSec float64 `json:"cycles_per_sec"`
	MemBytes     int64   `json:"mem_bytes"`
	MemPerLease  float64 `json:"mem_per_lease_bytes"`
	Errors       int64   `json:"errors"`
	FirstError   string  `json:"first_error,omitempty"`
	Partial      bool    `json:"partial"`
}

type herdJSON struct {
	Kind              string  `json:"kind"`
	Store             string  `json:"store"`
	Waiters           int     `json:"waiters"`
	Releases          int64   `json:"releases"`
	Attempts          int64   `json:"attempts"`
	WakeupsPerRelease float64 `json:"wakeups_per_release"`
	HandoffP50        float64 `json:"handoff_p50_ms"`
	HandoffP99        float64 `json:"handoff_p99_ms"`
	DurationS         float64 `json:"duration_s"`
	Errors            int64   `json:"errors"`
	FirstError        string  `json:"first_error,omitempty"`
	Partial           bool    `json:"partial"`
}

type referenceJSON struct {
	Kind         string  `json:"kind"`
	Store        string  `json:"store"`
	Ref          string  `json:"ref"`
	Clients      int     `json:"clients,omitempty"`
	AcquireLow   float64 `json:"acquire_low_ms,omitempty"`
	AcquireHigh  float64 `json:"acquire_high_ms,omitempty"`
	CyclesPerSec float64 `json:"cycles_per_sec,omitempty"`
	Source       string  `json:"source,omitempty"`
}

// round keeps 4 decimals: a tenth of a microsecond in milliseconds.
func round(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func msJSON(d Summary) (p50, p90, p99, mx float64) {
	return round(ms(d.P50)), round(ms(d.P90)), round(ms(d.P99)), round(ms(d.Max))
}

func (r Result) toJSON() cyclesJSON {
	a50, a90, a99, amax := msJSON(r.Acquire)
	return cyclesJSON{
		Kind: "cycles", Store: r.Store, Clients: r.Clients, Keys: r.Keys.String(),
		DurationS: round(r.Elapsed.Seconds()), Cycles: r.Cycles, CyclesPerSec: math.Round(r.CyclesPerSec()*10) / 10,
		AcquireP50: a50, AcquireP90: a90, AcquireP99: a99, AcquireMax: amax,
		ReleaseP50: round(ms(r.Release.P50)), ReleaseP99: round(ms(r.Release.P99)),
		Errors: r.Errors, FirstError: r.FirstError, Refused: r.Refused,
		Holders: r.Holders, HoldsLost: r.HoldsLost, Renewals: r.Renewals,
		RenewalsPerSec: math.Round(r.RenewalsPerSec*100) / 100,
		RenewP50:       round(ms(r.Renew.P50)), RenewP99: round(ms(r.Renew.P99)),
		HandoffN: r.Handoff.N, HandoffP50: round(ms(r.Handoff.P50)), HandoffP99: round(ms(r.Handoff.P99)),
		Partial: r.Partial,
	}
}

func (j cyclesJSON) result() (Result, error) {
	keys, err := ParseKeyMode(j.Keys)
	if j.Keys == "" {
		keys, err = Distinct, nil
	}
	if err != nil {
		return Result{}, err
	}
	r := Result{
		Store: j.Store, Clients: j.Clients, Keys: keys, Elapsed: fromSeconds(j.DurationS), Cycles: j.Cycles,
		Acquire: Summary{N: int(j.Cycles), P50: fromMS(j.AcquireP50), P90: fromMS(j.AcquireP90), P99: fromMS(j.AcquireP99), Max: fromMS(j.AcquireMax)},
		Release: Summary{N: int(j.Cycles), P50: fromMS(j.ReleaseP50), P99: fromMS(j.ReleaseP99)},
		Errors:  j.Errors, FirstError: j.FirstError, Refused: j.Refused,
		Renewals: j.Renewals, RenewalsPerSec: j.RenewalsPerSec,
		Renew:   Summary{N: int(j.Renewals), P50: fromMS(j.RenewP50), P99: fromMS(j.RenewP99)},
		Holders: j.Holders, HoldsLost: j.HoldsLost,
		Handoff: Summary{N: j.HandoffN, P50: fromMS(j.HandoffP50), P99: fromMS(j.HandoffP99)},
		Partial: j.Partial,
	}
	// A hand-written line may give cycles_per_sec without cycles and a
	// duration: keep the rate.
	if r.Cycles == 0 && j.CyclesPerSec > 0 {
		r.Elapsed = time.Second
		r.Cycles = int64(math.Round(j.CyclesPerSec))
	}
	return r, nil
}

func (r ScaleResult) toJSON() scaleJSON {
	return scaleJSON{
		Kind: "scale", Store: r.Store, Held: r.Held, FillPerSec: math.Round(r.FillPerSec*10) / 10,
		AcquireP50: round(ms(r.Acquire.P50)), AcquireP99: round(ms(r.Acquire.P99)),
		ReleaseP50: round(ms(r.Release.P50)), ReleaseP99: round(ms(r.Release.P99)),
		CyclesPerSec: math.Round(r.CyclesPerSec*10) / 10, MemBytes: r.MemBytes, MemPerLease: math.Round(r.MemPerLease*10) / 10,
		Errors: r.Errors, FirstError: r.FirstError, Partial: r.Partial,
	}
}

func (j scaleJSON) result() ScaleResult {
	return ScaleResult{
		Store: j.Store, Held: j.Held, FillPerSec: j.FillPerSec,
		Acquire:      Summary{P50: fromMS(j.AcquireP50), P99: fromMS(j.AcquireP99)},
		Release:      Summary{P50: fromMS(j.ReleaseP50), P99: fromMS(j.ReleaseP99)},
		CyclesPerSec: j.CyclesPerSec, MemBytes: j.MemBytes, MemPerLease: j.MemPerLease,
		Errors: j.Errors, FirstError: j.FirstError, Partial: j.Partial,
	}
}

func (r HerdResult) toJSON() herdJSON {
	return herdJSON{
		Kind: "herd", Store: r.Store, Waiters: r.Waiters, Releases: r.Releases, Attempts: r.Attempts,
		WakeupsPerRelease: math.Round(r.WakeupsPerRelease*100) / 100,
		HandoffP50:        round(ms(r.Handoff.P50)), HandoffP99: round(ms(r.Handoff.P99)),
		DurationS: round(r.Elapsed.Seconds()), Errors: r.Errors, FirstError: r.FirstError, Partial: r.Partial,
	}
}

func (j herdJSON) result() HerdResult {
	return HerdResult{
		Store: j.Store, Waiters: j.Waiters, Releases: j.Releases, Attempts: j.Attempts,
		WakeupsPerRelease: j.WakeupsPerRelease,
		Handoff:           Summary{N: int(j.Releases), P50: fromMS(j.HandoffP50), P99: fromMS(j.HandoffP99)},
		Elapsed:           fromSeconds(j.DurationS), Errors: j.Errors, FirstError: j.FirstError, Partial: j.Partial,
	}
}

func (r Reference) toJSON() referenceJSON {
	return referenceJSON{
		Kind: "reference", Store: r.Store, Ref: r.Kind, Clients: r.Clients,
		AcquireLow: round(ms(r.AcquireLow)), AcquireHigh: round(ms(r.AcquireHigh)),
		CyclesPerSec: math.Round(r.CyclesPerSec*10) / 10, Source: r.Source,
	}
}

func (j referenceJSON) result() Reference {
	r := Reference{
		Store: j.Store, Kind: j.Ref, Clients: j.Clients,
		AcquireLow: fromMS(j.AcquireLow), AcquireHigh: fromMS(j.AcquireHigh),
		CyclesPerSec: j.CyclesPerSec, Source: j.Source,
	}
	if r.AcquireHigh < r.AcquireLow {
		r.AcquireHigh = r.AcquireLow
	}
	if r.AcquireLow == 0 {
		r.AcquireLow = r.AcquireHigh
	}
	return r
}

func fromSeconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// WriteJSON writes every result in rep as one JSON object per line, in the
// order cycles, scale, herd, references. Each object has a "kind" field
// ("cycles", "scale", "herd" or "reference"); a cycles object has at least
// store, clients, cycles_per_sec, acquire_p50_ms, acquire_p99_ms and
// errors.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	for _, r := range rep.Cycles {
		if err := enc.Encode(r.toJSON()); err != nil {
			return err
		}
	}
	for _, r := range rep.Scale {
		if err := enc.Encode(r.toJSON()); err != nil {
			return err
		}
	}
	for _, r := range rep.Herd {
		if err := enc.Encode(r.toJSON()); err != nil {
			return err
		}
	}
	for _, r := range rep.References {
		if err := enc.Encode(r.toJSON()); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSON reads what WriteJSON wrote (several outputs may be
// concatenated) and appends it to rep. Blank lines and lines starting with
// # are skipped; a line without "kind" is a cycles result. The error names
// the line that could not be read.
func ReadJSON(r io.Reader, rep *Report) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var k struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(b, &k); err != nil {
			return fmt.Errorf("bench: line %d: %w", line, err)
		}
		var err error
		switch k.Kind {
		case "", "cycles":
			var j cyclesJSON
			if err = strictUnmarshal(b, &j); err == nil {
				var res Result
				if res, err = j.result(); err == nil {
					rep.Cycles = append(rep.Cycles, res)
				}
			}
		case "scale":
			var j scaleJSON
			if err = strictUnmarshal(b, &j); err == nil {
				rep.Scale = append(rep.Scale, j.result())
			}
		case "herd":
			var j herdJSON
			if err = strictUnmarshal(b, &j); err == nil {
				rep.Herd = append(rep.Herd, j.result())
			}
		case "reference":
			var j referenceJSON
			if err = strictUnmarshal(b, &j); err == nil {
				rep.References = append(rep.References, j.result())
			}
		default:
			err = fmt.Errorf("unknown kind %q (want cycles, scale, herd or reference)", k.Kind)
		}
		if err != nil {
			return fmt.Errorf("bench: line %d: %w", line, err)
		}
	}
	return sc.Err()
}

// strictUnmarshal rejects unknown fields, so that a misspelt field in a
// hand-written line is an error rather than a silent zero.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
