package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// runChild is the body of a child process; its exit status is the result.
// Modes:
//
//   - contend: WORKERS goroutines each win the hot key KEY GRANTS times,
//     checking exclusivity with an O_EXCL marker file while they hold it,
//     and logging each token to LOG while holding it (so the log's order is
//     the grant order).
//   - churn: acquire and release KEYS keys in a loop forever, some left to
//     expire, logging "key token" after each grant; the parent SIGKILLs it.
//   - open: open DB and report the outcome on stdout.
//   - wait: wait for KEY with an hour's backoff (waitChild).
//   - handoff: wait for a key each time stdin has a line (runHandoffChild).
func runChild(mode string) int {
	ctx := context.Background()
	db := os.Getenv("DB")
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "child %s (pid %d): %s\n", mode, os.Getpid(), fmt.Sprintf(format, args...))
		return 2
	}
	switch mode {
	case "open":
		s, err := Open(ctx, db, nil)
		if err != nil {
			fmt.Printf("ERR store=%v %v\n", errors.Is(err, leasehold.ErrStore), err)
			return 0
		}
		s.Close()
		fmt.Println("OK")
		return 0

	case "contend":
		s, err := Open(ctx, db, nil)
		if err != nil {
			return fail("open: %v", err)
		}
		defer s.Close()
		key, marker, log := os.Getenv("KEY"), os.Getenv("MARKER"), os.Getenv("LOG")
		workers, grants := envInt("WORKERS", 1), envInt("GRANTS", 10)
		errc := make(chan string, workers)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for won := 0; won < grants; {
					g, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "child", TTL: time.Minute})
					if errors.Is(err, leasehold.ErrHeld) {
						time.Sleep(rand.N(2 * time.Millisecond))
						continue
					}
					if err != nil {
						errc <- fmt.Sprintf("acquire: %v", err)
						return
					}
					f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
					if err != nil {
						errc <- fmt.Sprintf("OVERLAP: token %d granted while another holder is inside: %v", g.Token, err)
						return
					}
					f.Close()
					if err := appendLog(log, g.Token, os.Getpid()); err != nil {
						errc <- err.Error()
						return
					}
					if err := os.Remove(marker); err != nil {
						errc <- err.Error()
						return
					}
					if err := s.Release(ctx, g); err != nil {
						errc <- fmt.Sprintf("release token %d: %v", g.Token, err)
						return
					}
					won++
				}
			}()
		}
		wg.Wait()
		close(errc)
		if msg, ok := <-errc; ok {
			return fail("%s", msg)
		}
		return 0

	case "wait":
		if err := waitChild(db, os.Getenv("KEY")); err != nil {
			return fail("%v", err)
		}
		return 0

	case "handoff":
		if err := runHandoffChild(db, os.Getenv("MODE")); err != nil {
			return fail("%v", err)
		}
		return 0

	case "hold-write-lock":
		s, err := Open(ctx, db, nil)
		if err != nil {
			return fail("open: %v", err)
		}
		return fail("%v", holdWriteLock(s.db))

	case "churn":
		s, err := Open(ctx, db, nil)
		if err != nil {
			return fail("open: %v", err)
		}
		log := os.Getenv("LOG")
		keys := envInt("KEYS", 4)
		for i := 0; ; i++ {
			k := "churn/" + strconv.Itoa(i%keys)
			g, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: k, Owner: leasehold.NewOwnerID(), Label: "churn", TTL: 20 * time.Millisecond})
			if errors.Is(err, leasehold.ErrHeld) {
				continue
			}
			if err != nil {
				return fail("acquire: %v", err)
			}
			if err := appendLog(log, k, g.Token); err != nil {
				return fail("log: %v", err)
			}
			if i%7 == 0 {
				continue // leave it to expire
			}
			if err := s.Release(ctx, g); err != nil {
				return fail("release: %v", err)
			}
		}
	}
	return fail("unknown mode")
}
