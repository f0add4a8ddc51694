package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/resource"
)

// CLIChildConfig configures the command that the CLI workload's holders
// run under leasehold run.
type CLIChildConfig struct {
	ID       string        // the child's id ("c1.3")
	Resource string        // resource base URL
	History  string        // history file
	Work     time.Duration // pause between writes
	Ops      int           // writes before a normal exit
}

// Args returns the flags that ParseCLIChildArgs reads back.
func (c CLIChildConfig) Args() []string {
	return []string{"-id", c.ID, "-resource", c.Resource, "-history", c.History, "-work", c.Work.String(), "-ops", strconv.Itoa(c.Ops)}
}

// ParseCLIChildArgs parses the flags written by Args.
func ParseCLIChildArgs(args []string) (CLIChildConfig, error) {
	var c CLIChildConfig
	err := parsePairs("cli-child", args, func(k, v string) (err error) {
		switch k {
		case "-id":
			c.ID = v
		case "-resource":
			c.Resource = v
		case "-history":
			c.History = v
		case "-work":
			c.Work, err = time.ParseDuration(v)
		case "-ops":
			c.Ops, err = strconv.Atoi(v)
		default:
			return errUnknownFlag
		}
		return err
	})
	if err != nil {
		return c, err
	}
	if c.ID == "" || c.Resource == "" || c.History == "" || c.Work <= 0 || c.Ops < 1 {
		return c, errors.New("cli-child: -id, -resource, -history, -work and -ops are required")
	}
	return c, nil
}

// RunCLIChild is the command a CLI-workload holder runs: it takes its key
// and token from LEASEHOLD_KEY and LEASEHOLD_TOKEN, records its start (an
// upper bound of its holder's grant time), then makes cfg.Ops fenced writes
// to the resource, cfg.Work apart, recording each one's issue time, and
// exits. It ignores SIGTERM, like a command that does not stop when asked:
// only the SIGKILL that leasehold run or its watchdog sends at the holder's
// deadline ends it early.
func RunCLIChild(cfg CLIChildConfig) error {
	start := history.Mono()
	signal.Ignore(syscall.SIGTERM)
	key := os.Getenv("LEASEHOLD_KEY")
	token, err := strconv.ParseUint(os.Getenv("LEASEHOLD_TOKEN"), 10, 64)
	if err != nil || key == "" {
		return fmt.Errorf("cli-child: LEASEHOLD_KEY %q and LEASEHOLD_TOKEN %q: not run by leasehold run", key, os.Getenv("LEASEHOLD_TOKEN"))
	}
	owner := os.Getenv("LEASEHOLD_OWNER")
	rec, err := history.NewFileRecorder(cfg.History, cfg.ID)
	if err != nil {
		return err
	}
	defer rec.Close()
	rec.Record(history.Event{T0: start, Kind: history.EvStart, Key: key, Token: token, Owner: owner, Note: "pid=" + strconv.Itoa(os.Getpid())})
	rc := &resource.Client{Base: cfg.Resource, Holder: cfg.ID, HTTP: &http.Client{Timeout: 10 * time.Second}}
	rng := rand.New(rand.NewPCG(uint64(start), uint64(os.Getpid())))
	for i := range cfg.Ops {
		req := fmt.Sprintf("%s-%d", cfg.ID, i)
		t0 := history.Mono()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := rc.WriteRegister(ctx, key, owner, req, token, int64(i))
		cancel()
		rec.Record(history.Event{T0: t0, Kind: history.EvFWrite, Key: key, Token: token, Owner: owner, Req: req, Status: st, Err: errString(err)})
		time.Sleep(cfg.Work/2 + time.Duration(rng.Int64N(int64(cfg.Work))))
	}
	rec.Record(history.Event{Kind: history.EvReleased, Key: key, Token: token, Owner: owner, Note: "done"})
	return nil
}
