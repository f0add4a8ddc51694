package faults

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Event kinds. Holder processes record the store-level calls (seen through
// a recording wrapper around the store, so every attempt and every renewal
// the client makes is visible), the client-level lease lifecycle and the
// protected operations; the resource records what it read, wrote, admitted
// and refused; the harness records the faults.
const (
	// Store calls, recorded by the holder's wrapper: T0 call, T return.
	EvStoreAcquire = "s_acquire"
	EvStoreRenew   = "s_renew"
	EvStoreRelease = "s_release"

	// Client-level lease lifecycle, recorded by the holder.
	EvAcquired = "acquired" // Client.Acquire returned a lease (T0 call, T return)
	EvAcqFail  = "acq_fail" // Client.Acquire failed (Err)
	EvLost     = "lost"     // the lease's context ended with a *LostError: the loss signal
	EvReleased = "released" // Lease.Release returned (Err: its error)
	EvJeopardy = "jeopardy" // Options.OnJeopardy was called
	EvOp       = "op"       // a protected operation: T0 when issued (before its checkpoint), T at its end
	EvOpAbort  = "op_abort" // a checkpoint refused the next operation
	EvFWrite   = "fwrite"   // a fenced write as the holder saw it: T0 sent, T answered, Status
	EvStart    = "start"    // a holder process started (Note: its clock rate)

	// Resource, recorded by the harness's resource server.
	EvRead       = "read"    // W1 read of the counter (Val)
	EvCWrite     = "cwrite"  // W1 unfenced write of the counter (Val, Prev)
	EvAdmit      = "admit"   // W2 write admitted by the fence (Highest: the highest before it)
	EvFenced     = "fenced"  // W2 write refused as stale (Highest)
	EvBadRequest = "bad_req" // a malformed request (Err)
	EvFault      = "fault"   // harness: a fault injected (Phase "on") or healed ("off")
	EvMark       = "mark"    // harness: a point of interest (Note)
	EvStall      = "stall"   // harness: its own 10 ms ticker was starved from T0 to T (a machine-wide stall)
)

// Event is one line of a history. Times are CLOCK_MONOTONIC nanoseconds
// (Mono). Fields not relevant to a kind are left zero.
type Event struct {
	T     int64  `json:"t"`
	T0    int64  `json:"t0,omitempty"`
	Src   string `json:"src"` // holder id ("h2.1": slot 2, generation 1), "res" or "harness"
	Kind  string `json:"ev"`
	Key   string `json:"k,omitempty"`
	Token uint64 `json:"tok,omitempty"`
	Owner string `json:"own,omitempty"` // the grant's owner id: with Token, the grant's identity
	Req   string `json:"req,omitempty"` // request id of a protected write, shared by holder and resource

	Val     int64  `json:"val,omitempty"`
	Prev    int64  `json:"prev,omitempty"`
	Highest uint64 `json:"hi,omitempty"`
	Status  int    `json:"st,omitempty"`
	Left    int64  `json:"left,omitempty"` // holder-side lease time left, ns (holder's clock)
	Err     string `json:"err,omitempty"`

	Fault  string `json:"fault,omitempty"`  // fault class (F1..F12)
	Phase  string `json:"phase,omitempty"`  // "on" or "off"
	Target string `json:"target,omitempty"` // holder id, slot or store node
	Note   string `json:"note,omitempty"`
}

// Recorder appends events to a history. It is safe for concurrent use.
type Recorder interface {
	Record(e Event)
}

// FileRecorder appends each event as one JSON line to a file with a single
// write(2) on a file opened with O_APPEND, so the lines of a process killed
// by SIGKILL are complete up to its last event.
type FileRecorder struct {
	mu  sync.Mutex
	f   *os.File
	src string
	err error
}

// NewFileRecorder opens (creating or appending to) path; src is stamped on
// every event that has none.
func NewFileRecorder(path, src string) (*FileRecorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &FileRecorder{f: f, src: src}, nil
}

// Record writes e, stamping T (if zero) and Src (if empty).
func (r *FileRecorder) Record(e Event) {
	if e.T == 0 {
		e.T = Mono()
	}
	if e.Src == "" {
		e.Src = r.src
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic("faults: marshal event: " + err.Error())
	}
	b = append(b, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.f.Write(b); err != nil && r.err == nil {
		r.err = err
	}
}

// Close closes the file and returns the first write error, if any.
func (r *FileRecorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.err, r.f.Close())
}

// MemRecorder keeps events in memory. It is safe for concurrent use.
type MemRecorder struct {
	mu     sync.Mutex
	src    string
	events []Event
	notify func(Event)
}

// NewMemRecorder returns a recorder that stamps src on events without one
// and, if notify is not nil, calls it with each event (outside its lock).
func NewMemRecorder(src string, notify func(Event)) *MemRecorder {
	return &MemRecorder{src: src, notify: notify}
}

// Record stores e.
func (r *MemRecorder) Record(e Event) {
	if e.T == 0 {
		e.T = Mono()
	}
	if e.Src == "" {
		e.Src = r.src
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	if r.notify != nil {
		r.notify(e)
	}
}

// Events returns a copy of the recorded events, in recording order.
func (r *MemRecorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// ReadHistory reads JSON-line events from r. A truncated last line (a
// process killed mid-write cannot produce one with O_APPEND writes, but a
// full disk can) is an error naming the line.
func ReadHistory(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("history line %d: %w", n, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// ReadHistoryFile reads a history file.
func ReadHistoryFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	evs, err := ReadHistory(f)
	if err != nil {
		return evs, fmt.Errorf("%s: %w", path, err)
	}
	return evs, nil
}

// WriteHistory writes events as JSON lines.
func WriteHistory(w io.Writer, evs []Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// SortHistory orders events by time, stably.
func SortHistory(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].T < evs[j].T })
}

// mergeHistories adds the histories the processes of a run wrote in dir
// (files matching pattern) to evs, sorts them, and writes the merged
// history to dir/history.jsonl for inspection.
func mergeHistories(dir, pattern string, evs []Event) ([]Event, error) {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		he, err := ReadHistoryFile(f)
		if err != nil {
			return nil, err
		}
		evs = append(evs, he...)
	}
	SortHistory(evs)
	if f, err := os.Create(filepath.Join(dir, "history.jsonl")); err == nil {
		_ = WriteHistory(f, evs)
		f.Close()
	}
	return evs, nil
}
