package clientgo_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/clientgo"
	"github.com/leasehold-go/leasehold/postgres"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/sqlite"
)

// limit bounds every wait for something that must happen (a leader, a
// take-over): far longer than it takes, so a slow machine does not fail it.
const limit = 60 * time.Second

// electKey is the key the candidates elect on.
const electKey = "elect/controller"

// Timings of client-go's elector in these tests: the store's TTL is the
// lease duration (2 s).
const (
	leaseDuration = 2 * time.Second
	renewDeadline = 1500 * time.Millisecond
	retryPeriod   = 300 * time.Millisecond
)

// openStore opens the store spec names: a redis:// or postgres:// URL, or
// a sqlite file's path. It is closed when t ends.
func openStore(t testing.TB, spec string) leasehold.Store {
	t.Helper()
	var (
		st  leasehold.Store
		err error
	)
	switch {
	case strings.HasPrefix(spec, "redis://"):
		st, err = goredis.OpenURL(context.Background(), spec)
	case strings.HasPrefix(spec, "postgres://"):
		st, err = postgres.OpenURL(context.Background(), spec)
	default:
		st, err = sqlite.Open(context.Background(), spec, nil)
	}
	if err != nil {
		t.Fatalf("opening %s: %v", spec, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// leadLog appends a candidate's terms to a file, one line per event, each
// written in one write(2) so that a process killed with SIGKILL leaves
// whole lines: "LEAD id token t" when client-go starts leading (t: unix
// nanoseconds, read after the grant), "TERM id token deadline" after every
// successful acquire or renew (the holder-side deadline).
type leadLog struct {
	mu sync.Mutex
	f  *os.File
	id string
}

func openLeadLog(t testing.TB, path, id string) *leadLog {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return &leadLog{f: f, id: id}
}

func (g *leadLog) write(kind string, token uint64, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, _ = fmt.Fprintf(g.f, "%s %s %d %d\n", kind, g.id, token, at.UnixNano())
}

// candidate runs client-go's elector over a Lock on st until ctx ends,
// logging its terms to lg; led gets a value when it starts leading.
func candidate(ctx context.Context, t testing.TB, st leasehold.Store, lg *leadLog, led chan<- uint64) {
	t.Helper()
	lock, err := clientgo.New(st, electKey, lg.id, &clientgo.Options{
		OnTerm: func(tm clientgo.Term) { lg.write("TERM", tm.Token, tm.Deadline) },
	})
	if err != nil {
		t.Fatal(err)
	}
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: leaseDuration,
		RenewDeadline: renewDeadline,
		RetryPeriod:   retryPeriod,
		Name:          "leasehold-test",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				tm, ok := lock.Term()
				lg.write("LEAD", tm.Token, time.Now())
				if ok && led != nil {
					led <- tm.Token
				}
			},
			OnStoppedLeading: func() {},
		},
	})
}

// term is one leader's term as the logs tell it.
type term struct {
	id       string
	token    uint64
	start    time.Time // when client-go started leading
	deadline time.Time // the last holder-side deadline
}

// readTerms reads the terms in the logs at paths, by token.
func readTerms(t *testing.T, paths ...string) []term {
	t.Helper()
	by := map[uint64]*term{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kind, id string
			var token uint64
			var at int64
			if _, err := fmt.Sscanf(sc.Text(), "%s %s %d %d", &kind, &id, &token, &at); err != nil {
				t.Fatalf("%s: line %q: %v", p, sc.Text(), err)
			}
			tm := by[token]
			if tm == nil {
				tm = &term{id: id, token: token}
				by[token] = tm
			}
			if tm.id != id {
				t.Errorf("token %d was granted to both %s and %s", token, tm.id, id)
			}
			switch kind {
			case "LEAD":
				tm.start = time.Unix(0, at)
			case "TERM":
				if d := time.Unix(0, at); d.After(tm.deadline) {
					tm.deadline = d
				}
			}
		}
		_ = f.Close()
	}
	var terms []term
	for _, tm := range by {
		terms = append(terms, *tm)
	}
	sort.Slice(terms, func(i, j int) bool { return terms[i].token < terms[j].token })
	return terms
}

// checkTerms fails t unless every term that led began after the last
// holder-side deadline of every term with a lower token (a granted term
// whose holder had not started leading counts too): tokens increase with
// time and no two leaders overlap.
func checkTerms(t *testing.T, terms []term) {
	t.Helper()
	var last *term // the earlier term with the latest deadline
	for i := range terms {
		tm := &terms[i]
		if tm.deadline.IsZero() {
			t.Errorf("token %d (%s) has no deadline logged", tm.token, tm.id)
		}
		if !tm.start.IsZero() && last != nil && tm.start.Before(last.deadline) {
			t.Errorf("%s led with token %d from %s, before %s's token %d ended at %s: two leaders",
				tm.id, tm.token, tm.start.Format(time.RFC3339Nano), last.id, last.token, last.deadline.Format(time.RFC3339Nano))
		}
		if last == nil || tm.deadline.After(last.deadline) {
			last = tm
		}
	}
}
