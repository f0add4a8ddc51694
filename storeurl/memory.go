package storeurl

import (
	"context"
	"fmt"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// memoryRow is the in-process store: always built in.
func memoryRow() Kind {
	return Kind{
		Name: "memory", Title: "memory", Schemes: []string{"memory"},
		Package:  "memory",
		URLs:     []string{"memory://"},
		Usage:    "memory://               an empty in-process store (lives as long as one leasehold command)",
		CheckURL: checkMemory, Open: openMemory, Memory: MemoryHeap,
		Token: "per-key counter",
		Notes: "in-process, tests and examples",
	}
}

// checkMemory accepts memory: and memory:// with nothing else.
func checkMemory(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	if u.Opaque != "" || u.Host != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: a memory store URL is just memory:// (a new, empty in-process store)", u.Redacted())
	}
	return nil
}

// openMemory makes a new, empty store that lives as long as the process.
func openMemory(context.Context, string, *url.URL) (leasehold.Store, error) {
	return memory.New(nil), nil
}
