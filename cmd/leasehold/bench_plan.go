package main

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/bench"
	"github.com/leasehold-go/leasehold/storeurl"
)

// benchTarget is one store the bench measures.
type benchTarget struct {
	name   string
	url    string
	scheme string
	st     leasehold.Store
}

// benchPlan is the validated command line.
type benchPlan struct {
	stores   []string // the --store values, NAME=URL or URL
	targets  []benchTarget
	clients  []int
	duration time.Duration
	keys     bench.KeyMode
	scale    []int
	probes   int
	herd     []int
	memPIDs  []int
	handoffs int
	cycles   bool
	prims    bool
	asJSON   bool
	format   bench.Format
	chart    string
	title    string
	previous bench.Report
}

// open opens and checks every store of p before any load is sent, and
// names its target: the name given, else the store's kind, numbered when
// two targets would share one. Every store opened stays in p.targets,
// also when open fails, for close.
func (p *benchPlan) open(ctx context.Context) error {
	names := map[string]int{}
	for _, s := range p.stores {
		name, raw := splitStoreName(s)
		if name != "" && raw == "" {
			return usagef("--store %s: no URL after the name", s)
		}
		st, err := openStore(ctx, raw)
		if err != nil {
			return err
		}
		t := benchTarget{name: name, url: raw, scheme: scheme(raw), st: st}
		p.targets = append(p.targets, t)
		if err := bench.Reachable(ctx, st, 10*time.Second); err != nil {
			return fmt.Errorf("store %s: %w", redact(raw), err)
		}
		if t.name == "" {
			t.name = st.Info().Name
		}
		if names[t.name]++; names[t.name] > 1 {
			t.name = fmt.Sprintf("%s (%d)", t.name, names[t.name])
		}
		p.targets[len(p.targets)-1] = t
	}
	return nil
}

// close closes every store p opened.
func (p *benchPlan) close() {
	for _, t := range p.targets {
		t.st.Close()
	}
}

// memory chooses how --scale measures the memory of target t.
func (p *benchPlan) memory(t benchTarget) bench.MemProbe {
	switch {
	case len(p.memPIDs) > 0:
		return bench.ProcessMemory(p.memPIDs...)
	}
	k, _ := storeurl.Lookup(t.scheme)
	switch k.Memory {
	case storeurl.MemoryHeap:
		return bench.HeapMemory()
	case storeurl.MemoryProcess:
		return bench.ProcessMemory(0)
	}
	return nil // a server's memory needs --mem-pid
}
