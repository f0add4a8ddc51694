// Package testserver starts throwaway servers for the repository's tests,
// benchmarks and fault harness: real server processes on free loopback
// ports, with their data in temporary folders, each in its own process
// group, killed with the test binary if it dies (Linux).
//
// [Process] is the lifecycle every server shares: start, a readiness probe
// with a deadline, the server's log in the error when a start fails, stop
// (a graceful signal, then SIGKILL), kill, pause and resume, and restart on
// the same port and data folder. Each launcher is one small file of a few
// functions over it:
//
//   - redis.go: redis-server, one or several independent masters (Redlock);
//   - postgres.go and pgbouncer.go: a PostgreSQL cluster made by initdb,
//     and PgBouncer in front of it;
//   - mariadb.go: a MariaDB server;
//   - etcd.go: an etcd single node or cluster;
//   - zookeeper.go: a ZooKeeper standalone server or ensemble (Java, from
//     Debian's package);
//   - consul.go: a Consul dev agent or a cluster of server agents;
//   - azurite.go: Azurite's blob service (Azure Blob emulator);
//   - versitygw.go: the Versity S3 gateway over a folder (posix backend),
//     its buckets made as folders;
//   - dynalite.go: dynalite, a DynamoDB-compatible server (Node.js), in
//     memory or on a LevelDB.
//   - kube.go: kube-apiserver over an etcd of its own, with RBAC, a token
//     file, a client CA and certificates made in its folder (kubepki.go).
//
// Each launcher has an error-returning StartX for TestMain functions and
// other non-test users, and a NewX(t) that fails t when the server cannot
// start and stops it when t ends. Readiness probes speak the servers' wire
// protocols themselves (RESP, the PostgreSQL and MariaDB handshakes, etcd's
// HTTP /health, ZooKeeper's srvr, Consul's /v1/status/leader), so that the package needs nothing outside the standard
// library. A new server is one more file: find its binary with [FindBin], pick ports with [FreePort], write a
// probe, and start a [Process].
//
// Binaries are looked up in $LEASEHOLD_BIN (default ~/.cache/leasehold/bin),
// then on PATH, then in a few system folders; a missing binary is an error
// naming its install script under scripts/install, never a skip.
//
// The package runs on Linux and other Unix systems (process groups and
// signals); the parent-death signal is Linux's.
//
// The command cmd/servers is the kit for scripts: it starts named servers
// (servers redis pg=postgres etcd3=etcd:3 ...), prints their addresses, URLs
// and process ids as KEY=VALUE lines, and stops them all when signalled or
// when its standard input closes (scripts/bench-page).
package testserver
