package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// MemProbe reports the memory, in bytes, that holds a store's leases.
type MemProbe func(ctx context.Context) (int64, error)

// HeapMemory reports the Go heap in use after a garbage collection: the
// memory of a store that lives in this process's Go heap (the memory store).
func HeapMemory() MemProbe {
	return func(context.Context) (int64, error) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc), nil
	}
}

// ProcessMemory reports the proportional set size (PSS) of the processes
// pids and all their descendants, summed: the memory of a server (a
// PostgreSQL postmaster and its backends, a Redis or etcd process). PSS
// charges each shared page to its sharers in proportion, so shared buffers
// are counted once. A pid of 0 means this process (after a garbage
// collection), for stores that live in it (sqlite). It reads Linux's /proc
// (smaps_rollup, or VmRSS in status where that is missing) and fails
// elsewhere.
func ProcessMemory(pids ...int) MemProbe {
	return func(ctx context.Context) (int64, error) {
		if len(pids) == 0 {
			return 0, errors.New("bench: no process to measure")
		}
		self := os.Getpid()
		roots := make([]int, len(pids))
		for i, p := range pids {
			if p == 0 || p == self {
				runtime.GC()
				p = self
			}
			roots[i] = p
		}
		all, err := descendants(roots)
		if err != nil {
			return 0, err
		}
		var sum int64
		for _, p := range all {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			n, err := processPSS(p)
			if err != nil {
				if isRoot(p, roots) {
					return 0, err
				}
				continue // a child that exited meanwhile
			}
			sum += n
		}
		return sum, nil
	}
}

func isRoot(p int, roots []int) bool {
	for _, r := range roots {
		if r == p {
			return true
		}
	}
	return false
}

// descendants returns roots and every process whose ancestry leads to one.
func descendants(roots []int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("bench: reading process memory: %w", err)
	}
	parent := make(map[int]int)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if pp, ok := parsePPID(string(b)); ok {
			parent[pid] = pp
		}
	}
	want := make(map[int]bool)
	for _, r := range roots {
		if _, ok := parent[r]; !ok {
			return nil, fmt.Errorf("bench: reading process memory: no process %d", r)
		}
		want[r] = true
	}
	var out []int
	for pid := range parent {
		for p, hops := pid, 0; p > 0 && hops < 64; p, hops = parent[p], hops+1 {
			if want[p] {
				out = append(out, pid)
				break
			}
		}
	}
	return out, nil
}

// parsePPID reads the parent pid from the text of /proc/PID/stat, whose
// second field (the command name, in parentheses) may hold spaces and
// parentheses.
func parsePPID(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

// processPSS returns the PSS of pid, or its RSS where smaps_rollup is
// missing.
func processPSS(pid int) (int64, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	if n, err := kBField(filepath.Join(dir, "smaps_rollup"), "Pss:"); err == nil {
		return n, nil
	}
	n, err := kBField(filepath.Join(dir, "status"), "VmRSS:")
	if err != nil {
		return 0, fmt.Errorf("bench: reading the memory of process %d: %w", pid, err)
	}
	return n, nil
}

// kBField returns the value of the "Name:   123 kB" line of a /proc file,
// in bytes.
func kBField(path, name string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		fields := strings.Fields(line[len(name):])
		if len(fields) == 0 {
			break
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			break
		}
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			n *= 1024
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s line in %s", strings.TrimSuffix(name, ":"), path)
}
