package testserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// RedisOptions configure a redis-server. The zero value is a server without
// persistence, in a new folder under the system's temporary folder.
type RedisOptions struct {
	// Dir is the folder the server's own folder is made in; "" means the
	// system's temporary folder.
	Dir string
	// Args are more "--option value" arguments; they come after the
	// defaults, which they override (say "--appendonly", "yes").
	Args []string
	// Env is added to the server's environment.
	Env []string
}

// Redis is a running redis-server on 127.0.0.1.
type Redis struct {
	*Process
	Port int
	Dir  string // the server's folder: its data and redis.log
}

// StartRedis starts a redis-server on a free loopback port and waits until
// it answers PING. A port taken meanwhile is retried with another.
func StartRedis(ctx context.Context, opts RedisOptions) (*Redis, error) {
	bin, err := FindBin("redis-server", "redis.sh")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "leasehold-redis-")
	if err != nil {
		return nil, err
	}
	for range 5 {
		var port int
		if port, err = FreePort(); err != nil {
			break
		}
		r := &Redis{Port: port, Dir: dir}
		r.Process = NewProcess(Spec{
			Name: "redis-server on port " + strconv.Itoa(port),
			Path: bin,
			Args: append([]string{
				"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
				"--save", "", "--appendonly", "no", "--daemonize", "no",
				"--logfile", filepath.Join(dir, "redis.log"),
			}, opts.Args...),
			Env:   opts.Env,
			Log:   filepath.Join(dir, "stdout.log"),
			Logs:  []string{filepath.Join(dir, "redis.log")},
			Probe: func(ctx context.Context) error { return redisPing(ctx, r.Addr()) },
		})
		if err = r.Start(ctx); err == nil {
			return r, nil
		}
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

// NewRedis starts a redis-server for t (failing t if it cannot) and stops
// it when t ends.
func NewRedis(t testing.TB, opts RedisOptions) *Redis {
	t.Helper()
	r, err := StartRedis(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// StartRedisMasters starts n independent redis-servers, as Redlock's
// masters.
func StartRedisMasters(ctx context.Context, n int, opts RedisOptions) ([]*Redis, error) {
	var ms []*Redis
	for range n {
		r, err := StartRedis(ctx, opts)
		if err != nil {
			for _, m := range ms {
				m.Stop()
			}
			return nil, err
		}
		ms = append(ms, r)
	}
	return ms, nil
}

// NewRedisMasters starts n independent redis-servers for t and stops them
// when t ends.
func NewRedisMasters(t testing.TB, n int, opts RedisOptions) []*Redis {
	t.Helper()
	ms, err := StartRedisMasters(t.Context(), n, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		t.Cleanup(m.Stop)
	}
	return ms
}

// Addr returns host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }

// URL returns redis://host:port/0.
func (r *Redis) URL() string { return "redis://" + r.Addr() + "/0" }

// Stop kills the server and removes its folder. Without persistence there
// is nothing to shut down gracefully.
func (r *Redis) Stop() {
	r.Kill()
	_ = os.RemoveAll(r.Dir)
}
