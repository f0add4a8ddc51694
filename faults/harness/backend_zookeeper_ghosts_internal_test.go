package harness

import (
	"archive/tar"
	"compress/bzip2"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/zookeeper"
)

func TestGhostsIn(t *testing.T) {
	for _, c := range []struct {
		name   string
		leader []string
		pzxid  int64
		member map[string]int64
		want   []string
	}{
		{"same", []string{"a-1", "b-2"}, 10, map[string]int64{}, nil},
		{"the leader has it", []string{"a-1"}, 10, map[string]int64{"a-1": 5}, nil},
		{"created after the leader's read", []string{"a-1"}, 10, map[string]int64{"b-2": 11}, nil},
		{"gone on the leader, still on the member", []string{"a-1"}, 10, map[string]int64{"b-2": 7}, []string{"b-2"}},
		{"created at the leader's pzxid", nil, 10, map[string]int64{"b-2": 10}, []string{"b-2"}},
		{"sorted", nil, 10, map[string]int64{"c-3": 3, "a-1": 1, "b-2": 12}, []string{"a-1", "c-3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ghostsIn(c.leader, c.pzxid, c.member); !slices.Equal(got, c.want) {
				t.Errorf("ghostsIn = %v, want %v", got, c.want)
			}
		})
	}
}

// TestZooKeeperHealGhosts restarts an ensemble on the data of the long
// run that stalled (seed 9403, testdata/zk-ghosts-9403.tar.bz2: zk1's and
// zk3's version-2; zk2 starts empty and takes a snapshot). zk1 holds the
// nodes of two sessions the leader zk3 had dropped without a transaction,
// at the head of every key's queue; a holder pinned to zk1 (the run's h1)
// waited behind them for ever, and every other holder behind h1. Heal must
// find the ghosts and resync zk1, after which a store pinned to zk1
// acquires every key. Without the ghost check, the acquires wait until the
// test's deadline.
func TestZooKeeperHealGhosts(t *testing.T) {
	ctx := t.Context()
	b := &ZooKeeper{}
	if err := b.Start(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.KillStore(); err != nil {
		t.Fatal(err)
	}
	for _, n := range b.z.Nodes {
		if err := os.RemoveAll(filepath.Join(n.Dir, "version-2")); err != nil {
			t.Fatal(err)
		}
	}
	untar(t, "testdata/zk-ghosts-9403.tar.bz2", func(name string) string {
		for i, n := range b.z.Nodes {
			if rest, ok := strings.CutPrefix(name, zkNodeName(i)+"/"); ok {
				return filepath.Join(n.Dir, rest)
			}
		}
		t.Fatalf("%s: not a member's file", name)
		return ""
	})
	if err := b.RestartStore(ctx, false); err != nil {
		t.Fatal(err)
	}
	did, err := b.Heal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(did, "zk1 held") {
		t.Errorf("Heal = %q, want zk1's ghosts found and zk1 resynced", did)
	}
	t.Log(did)
	s, err := zookeeper.New(ctx, zookeeper.Options{Servers: []string{b.z.Nodes[0].Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The restored live sessions expire one session timeout after the
	// restart; the bound is far beyond that, and far short of never.
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for k := range 16 {
		wg.Go(func() {
			key := fmt.Sprintf("k%d", k)
			g, err := s.AcquireWait(actx, leasehold.AcquireRequest{Key: key, Owner: fmt.Sprintf("%032x", k+1), Label: "test", TTL: time.Second})
			if err != nil {
				t.Errorf("AcquireWait(%s) through zk1: %v", key, err)
				return
			}
			if err := s.Release(ctx, g); err != nil {
				t.Errorf("Release(%s): %v", key, err)
			}
		})
	}
	wg.Wait()
}

// untar extracts the regular files of the bzip2-compressed tar archive at
// path, each to where(name).
func untar(t *testing.T, path string, where func(string) string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(bzip2.NewReader(f))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		dst := where(h.Name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(dst)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
