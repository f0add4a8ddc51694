package main

import (
	"fmt"
	"strings"
)

// layers says which of the three layers a worker applies. All three is
// the real configuration; the others are negative controls, which show what
// each layer absorbs by leaving it out.
type layers struct {
	Fence  bool // 1: the effect is written only with a token the fence has not seen surpassed
	Dedupe bool // 2: a msg_id already done is acked without the work
	Lease  bool // 3: a lease on the msg_id, so that concurrent duplicates are not both run
}

// allLayers returns the real configuration.
func allLayers() layers { return layers{Fence: true, Dedupe: true, Lease: true} }

// parseLayers reads a comma-separated list of fence, dedupe and lease, or
// "all" or "none".
func parseLayers(s string) (layers, error) {
	switch s {
	case "all":
		return allLayers(), nil
	case "none", "":
		return layers{}, nil
	}
	var l layers
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "fence":
			l.Fence = true
		case "dedupe":
			l.Dedupe = true
		case "lease":
			l.Lease = true
		default:
			return l, fmt.Errorf("unknown layer %q (want fence, dedupe, lease, all or none)", name)
		}
	}
	return l, nil
}

// String returns the form parseLayers reads.
func (l layers) String() string {
	if l == allLayers() {
		return "all"
	}
	var names []string
	for _, n := range []struct {
		on   bool
		name string
	}{{l.Fence, "fence"}, {l.Dedupe, "dedupe"}, {l.Lease, "lease"}} {
		if n.on {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}
