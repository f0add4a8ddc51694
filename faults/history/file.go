package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Read reads JSON-line events from r. A truncated last line (a
// process killed mid-write cannot produce one with O_APPEND writes, but a
// full disk can) is an error naming the line.
func Read(r io.Reader) ([]Event, error) {
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

// ReadFile reads a history file.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	evs, err := Read(f)
	if err != nil {
		return evs, fmt.Errorf("%s: %w", path, err)
	}
	return evs, nil
}

// Write writes events as JSON lines.
func Write(w io.Writer, evs []Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Sort orders events by time, stably.
func Sort(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].T < evs[j].T })
}

// Merge adds the histories the processes of a run wrote in dir
// (files matching pattern) to evs, sorts them, and writes the merged
// history to dir/history.jsonl for inspection.
func Merge(dir, pattern string, evs []Event) ([]Event, error) {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		he, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		evs = append(evs, he...)
	}
	Sort(evs)
	if f, err := os.Create(filepath.Join(dir, "history.jsonl")); err == nil {
		_ = Write(f, evs)
		f.Close()
	}
	return evs, nil
}
