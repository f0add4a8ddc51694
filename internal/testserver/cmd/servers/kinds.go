package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// server is one started server: the KEY=VALUE pairs printed for it (the
// keys without the server's name) and how it stops.
type server struct {
	vars [][2]string
	stop func()
}

// kind is a server this command can start.
type kind struct {
	name  string
	about string // for -list
	arg   string // what NAME=KIND:ARG's ARG means; "" when it takes none
	start func(ctx context.Context, dir, arg string) (*server, error)
}

// kinds are the servers this command starts, with the settings the
// scripts measure with: every one without fsync, as the tests run them,
// and with the connection limits of many benchmark clients.
func kinds() []kind {
	return []kind{
		{"redis", "one redis-server, no persistence", "", startRedis},
		{"postgres", "one PostgreSQL cluster (initdb), fsync and synchronous_commit off, 400 connections", "", startPostgres},
		{"etcd", "an etcd cluster, --unsafe-no-fsync, etcd's own raft timings", "members (default 1)", startEtcd},
		{"zookeeper", "a ZooKeeper server or ensemble, forceSync=no, sessions up to 300 s", "servers (default 1)", startZooKeeper},
		{"consul", "a Consul dev agent (Raft log in memory), or a cluster of server agents; 4096 HTTP connections per client", "server agents (default 0: one dev agent)", startConsul},
		{"azurite", "Azurite's blob service, in memory", "the container its URL names (default leasehold)", startAzurite},
		{"versitygw", "versitygw (S3) over a folder", "the bucket it makes and its URL names (default leasehold)", startVersity},
		{"dynalite", "dynalite (DynamoDB) in memory", "the table it makes and its URL names (default leasehold)", startDynalite},
		{"kube-apiserver", "kube-apiserver over an etcd node of its own, RBAC, a kubeconfig in its folder", "the namespace it makes and its URL names (default leasehold)", startKube},
	}
}

// findKind returns the kind named name.
func findKind(name string) (kind, bool) {
	for _, k := range kinds() {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

// count parses a count argument: def when arg is "".
func count(arg string, def int) (int, error) {
	if arg == "" {
		return def, nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 || n > 9 {
		return 0, fmt.Errorf("%q is not a count from 0 to 9", arg)
	}
	return n, nil
}

// pids returns the process ids, comma-separated.
func pids(ids ...int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

func startRedis(ctx context.Context, dir, _ string) (*server, error) {
	r, err := testserver.StartRedis(ctx, testserver.RedisOptions{Dir: dir})
	if err != nil {
		return nil, err
	}
	return &server{vars: [][2]string{{"ADDR", r.Addr()}, {"URL", r.URL()}, {"PIDS", pids(r.Pid())}}, stop: r.Stop}, nil
}

func startPostgres(ctx context.Context, dir, _ string) (*server, error) {
	pg, err := testserver.StartPostgres(ctx, testserver.PostgresOptions{Dir: dir,
		Args: []string{"-c", "synchronous_commit=off", "-c", "max_connections=400"}})
	if err != nil {
		return nil, err
	}
	return &server{vars: [][2]string{{"ADDR", pg.Addr()}, {"URL", pg.ConnString()}, {"PIDS", pids(pg.Pid())}}, stop: pg.Stop}, nil
}

func startEtcd(ctx context.Context, dir, arg string) (*server, error) {
	n, err := count(arg, 1)
	if err != nil || n == 0 {
		return nil, fmt.Errorf("etcd: members: %q is not a count from 1 to 9", arg)
	}
	// etcd's own raft timings (the tests' are 4 times faster, for
	// failovers), so that a benchmark pays no more heartbeats than a
	// deployment.
	c, err := testserver.StartEtcd(ctx, testserver.EtcdOptions{Nodes: n, NoFsync: true,
		Heartbeat: 100 * time.Millisecond, Election: time.Second, Dir: dir})
	if err != nil {
		return nil, err
	}
	addr := strings.TrimPrefix(c.URL(), "etcd://")
	return &server{vars: [][2]string{{"ADDR", addr}, {"URL", c.URL()}, {"PIDS", pids(c.PIDs()...)}}, stop: c.Stop}, nil
}

func startZooKeeper(ctx context.Context, dir, arg string) (*server, error) {
	n, err := count(arg, 1)
	if err != nil || n == 0 {
		return nil, fmt.Errorf("zookeeper: servers: %q is not a count from 1 to 9", arg)
	}
	z, err := testserver.StartZooKeeper(ctx, testserver.ZooKeeperOptions{Nodes: n, MaxSession: 300 * time.Second, Dir: dir})
	if err != nil {
		return nil, err
	}
	return &server{vars: [][2]string{{"ADDR", z.Servers()}, {"URL", z.URL("")}, {"PIDS", pids(z.PIDs()...)}}, stop: z.Stop}, nil
}

func startConsul(ctx context.Context, dir, arg string) (*server, error) {
	n, err := count(arg, 0)
	if err != nil {
		return nil, fmt.Errorf("consul: server agents: %w", err)
	}
	// Many clients on one address (consul/api's Lock holds a blocking
	// query per lock) pass the agent's default 200 connections per client
	// address, which answers 429.
	c, err := testserver.StartConsul(ctx, testserver.ConsulOptions{Servers: n, Dir: dir,
		Args: []string{"-hcl", "limits { http_max_conns_per_client = 4096 }"}})
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, a := range c.Agents {
		ids = append(ids, a.Pid())
	}
	return &server{vars: [][2]string{{"ADDR", c.Agents[0].Addr()}, {"URL", c.URL(0)}, {"PIDS", pids(ids...)}}, stop: c.Stop}, nil
}

func startAzurite(ctx context.Context, dir, arg string) (*server, error) {
	if arg == "" {
		arg = "leasehold"
	}
	a, err := testserver.StartAzurite(ctx, testserver.AzuriteOptions{Dir: dir})
	if err != nil {
		return nil, err
	}
	u := "azblob://" + testserver.AzuriteAccount + "/" + arg + "?endpoint=" + url.QueryEscape(a.BlobEndpoint()) + "&auth=key"
	return &server{vars: [][2]string{
		{"ADDR", a.Addr()}, {"URL", u}, {"PIDS", pids(a.Pid())}, {"ENDPOINT", a.BlobEndpoint()},
		{"ACCOUNT", testserver.AzuriteAccount}, {"KEY", testserver.AzuriteKey},
	}, stop: a.Stop}, nil
}

func startVersity(ctx context.Context, dir, arg string) (*server, error) {
	if arg == "" {
		arg = "leasehold"
	}
	v, err := testserver.StartVersity(ctx, testserver.VersityOptions{Dir: dir, Buckets: []string{arg}})
	if err != nil {
		return nil, err
	}
	q := url.Values{"endpoint": {v.Endpoint()}, "region": {testserver.VersityRegion},
		"access_key": {testserver.VersityAccessKey}, "secret_key": {testserver.VersitySecretKey}}
	return &server{vars: [][2]string{
		{"ADDR", v.Addr()}, {"URL", "s3://" + arg + "?" + q.Encode()}, {"PIDS", pids(v.Pid())},
		{"ENDPOINT", v.Endpoint()}, {"REGION", testserver.VersityRegion},
		{"ACCESS_KEY", testserver.VersityAccessKey}, {"SECRET_KEY", testserver.VersitySecretKey},
	}, stop: v.Stop}, nil
}

func startDynalite(ctx context.Context, dir, arg string) (*server, error) {
	if arg == "" {
		arg = "leasehold"
	}
	d, err := testserver.StartDynalite(ctx, testserver.DynaliteOptions{Dir: dir})
	if err != nil {
		return nil, err
	}
	if err := d.CreateTable(ctx, arg); err != nil {
		d.Stop()
		return nil, err
	}
	q := url.Values{"endpoint": {d.Endpoint()}, "region": {testserver.DynaliteRegion},
		"access_key": {testserver.DynaliteAccessKey}, "secret_key": {testserver.DynaliteSecretKey}}
	return &server{vars: [][2]string{
		{"ADDR", d.Addr()}, {"URL", "dynamodb://" + arg + "?" + q.Encode()}, {"PIDS", pids(d.Pid())},
		{"ENDPOINT", d.Endpoint()}, {"REGION", testserver.DynaliteRegion},
		{"ACCESS_KEY", testserver.DynaliteAccessKey}, {"SECRET_KEY", testserver.DynaliteSecretKey},
	}, stop: d.Stop}, nil
}

func startKube(ctx context.Context, dir, arg string) (*server, error) {
	if arg == "" {
		arg = "leasehold"
	}
	k, err := testserver.StartKube(ctx, testserver.KubeOptions{Dir: dir})
	if err != nil {
		return nil, err
	}
	kc, err := k.Kubeconfig(arg)
	if err == nil {
		err = k.CreateNamespace(ctx, arg)
	}
	if err != nil {
		k.Stop()
		return nil, err
	}
	return &server{vars: [][2]string{
		{"ADDR", k.Addr()}, {"URL", "kube:///" + arg + "?" + url.Values{"kubeconfig": {kc}}.Encode()},
		{"PIDS", pids(append([]int{k.Pid()}, k.Etcd.PIDs()...)...)}, {"KUBECONFIG", kc},
	}, stop: k.Stop}, nil
}
