package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// BenchmarkHandoffProcess times the hand-off of a key from this process to
// a waiter in another: from the Release call here to the waiter's Acquire
// returning there (both read the host's clock). Two child processes wait
// in turn, interleaved, with the default client options: one through the
// store's wake-ups (notify), one through a wrapper that hides Subscribe,
// so it can only poll with backoff (poll), as before the wake-ups existed.
// The holder keeps the key 50 ms after the waiter starts, as leasehold
// bench's hand-off does. Run with -benchtime=Nx for N hand-offs per mode:
//
//	GOWORK=off go test -run '^$' -bench HandoffProcess -benchtime 50x
func BenchmarkHandoffProcess(b *testing.B) {
	path := tempDB(b)
	s := openT(b, path, nil)
	modes := []string{"notify", "poll"}
	waiters := make([]*handoffChild, len(modes))
	for i, m := range modes {
		waiters[i] = startHandoffChild(b, path, m)
	}
	samples := make([][]time.Duration, len(modes))
	ctx := context.Background()
	for b.Loop() {
		for i, w := range waiters {
			g := mustAcquireTB(b, s, req("handoff", 10*time.Second))
			w.send(b, "go")
			time.Sleep(50 * time.Millisecond)
			t0 := time.Now()
			if err := s.Release(ctx, g); err != nil {
				b.Fatal(err)
			}
			at, err := strconv.ParseInt(w.recv(b), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			samples[i] = append(samples[i], time.Unix(0, at).Sub(t0))
		}
	}
	for i, m := range modes {
		slices.Sort(samples[i])
		ss := samples[i]
		b.ReportMetric(float64(ss[len(ss)/2])/1e6, m+"_p50_ms")
		b.ReportMetric(float64(ss[len(ss)*9/10])/1e6, m+"_p90_ms")
		// For scripts/bench-page's summary table.
		fmt.Printf("SUMMARY embedded-handoff-%s-p50-ms %.3f\n", m, float64(ss[len(ss)/2])/1e6)
	}
}

func mustAcquireTB(tb testing.TB, s *Store, r leasehold.AcquireRequest) leasehold.Grant {
	tb.Helper()
	for {
		g, err := s.Acquire(context.Background(), r)
		if err == nil {
			return g
		}
		if !errors.Is(err, leasehold.ErrHeld) {
			tb.Fatal(err)
		}
		time.Sleep(time.Millisecond) // the waiter is releasing it
	}
}

// handoffChild is a child process in mode "handoff": it waits for the key
// each time it reads a line, and answers with the time it got it.
type handoffChild struct {
	in  io.WriteCloser
	out *bufio.Reader
}

func startHandoffChild(tb testing.TB, path, mode string) *handoffChild {
	tb.Helper()
	bin, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=handoff", "DB="+path, "MODE="+mode)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		in.Close() // the child exits at the end of its input
		cmd.Wait()
	})
	return &handoffChild{in: in, out: bufio.NewReader(out)}
}

func (c *handoffChild) send(tb testing.TB, line string) {
	if _, err := fmt.Fprintln(c.in, line); err != nil {
		tb.Fatal(err)
	}
}

func (c *handoffChild) recv(tb testing.TB) string {
	line, err := c.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("child: %v", err)
	}
	return strings.TrimSpace(line)
}

// runHandoffChild is the child mode "handoff": for each line on stdin, wait
// for key "handoff" (MODE poll: through a wrapper without Subscribe),
// release it, and print the time the grant arrived.
func runHandoffChild(db, mode string) error {
	s, err := Open(context.Background(), db, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	var st leasehold.Store = s
	if mode == "poll" {
		st = struct{ leasehold.Store }{s}
	}
	cl, err := leasehold.New(st, &leasehold.Options{TTL: 10 * time.Second})
	if err != nil {
		return err
	}
	defer cl.Close()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		l, err := cl.Acquire(context.Background(), "handoff", leasehold.AcquireOptions{Wait: time.Minute})
		if err != nil {
			return err
		}
		at := time.Now().UnixNano()
		if err := l.Release(context.Background()); err != nil {
			return err
		}
		fmt.Println(at)
	}
	return sc.Err()
}

// BenchmarkAnnounce: what a release pays for its wake-up (touching its
// bucket file), with no watch, and with one watch of another Store
// reading the events.
func BenchmarkAnnounce(b *testing.B) {
	for _, watched := range []bool{false, true} {
		b.Run(map[bool]string{false: "unwatched", true: "watched"}[watched], func(b *testing.B) {
			path := tempDB(b)
			s := openT(b, path, nil)
			if watched {
				_, unsub, err := openT(b, path, nil).Subscribe(context.Background(), "other")
				if err != nil {
					b.Fatal(err)
				}
				defer unsub()
			}
			b.ReportAllocs()
			for b.Loop() {
				s.wake.released("k")
			}
		})
	}
}
