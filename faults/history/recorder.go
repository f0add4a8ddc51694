package history

import (
	"encoding/json"
	"errors"
	"os"
	"sync"
)

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
		panic("history: marshal event: " + err.Error())
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
