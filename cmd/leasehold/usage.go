package main

import (
	"fmt"
	"strings"

	"github.com/leasehold-go/leasehold/storeurl"
)

// All of the command's help text lives here. A new subcommand adds its name
// to commands, its summary line to usageText, its own text to commandUsage,
// and a case to the switch in app.main.

// commands lists the subcommands, in the order of usageText.
var commands = []string{"run", "acquire", "renew", "release", "status", "elect", "observe", "migrate", "bench", "serve", "version", "help"}

var usageText = `leasehold runs commands and shell steps under distributed leases with fencing tokens.

Usage:
` + synopsis + `
Run "leasehold help COMMAND" for the details of one command. Flags go
before or after the key (KEY, or --key KEY anywhere among the flags), and
before "--". renew and release read KEY, OWNER and N from $LEASEHOLD_KEY,
$LEASEHOLD_OWNER and $LEASEHOLD_TOKEN when they are not given.

--json, on every command but help: the output, if the command prints any, is JSON,
and an error that ends the command is one line of JSON on stderr,
  {"command":"acquire","error":"key \"k\" is held by ...","exit":75,"holder":{...}}
(run and elect: leasehold's own errors; the command's output is its own).

The store is named by --store URL, else by $LEASEHOLD_STORE, else it is the
embedded store in $XDG_STATE_HOME/leasehold/leases.db (default
~/.local/state/leasehold/leases.db), created with its folder on first use;
for a sqlite URL of your own the file's folder must exist.

$LEASEHOLD_LOG=debug|info|warn|error logs on stderr, at that level, the
lease's events (grants and releases at debug, failed renewals at warn, a
loss at error) and the store drivers' own lines (go-redis, the etcd
client). Unset or off, only errors that end a command are printed.
` + schemesText + exitText

// synopsis is the usage of every command, one line each (bench's runs on).
// The README's CLI block holds the same commands and flags (TestREADMEUsage).
const synopsis = `  leasehold run     KEY [--read|--write] [--ttl 15s] [--wait D|forever] [--slots N] [--min-hold D] [--tick D] [--grace D] [--label L] [--store URL] [--token-file FILE] [--metrics-addr HOST:PORT] [--json] -- COMMAND [ARGS...]
  leasehold acquire KEY [--ttl 15s] [--wait D|forever] [--label L] [--store URL] [--token-file FILE] [--json]
  leasehold renew   [KEY] [--owner OWNER] [--token N] [--ttl 15s] [--store URL] [--token-file FILE] [--json]
  leasehold release [KEY] [--owner OWNER] [--token N] [--store URL] [--token-file FILE] [--json]
  leasehold status  [KEY | --prefix P] [--store URL] [--token-file FILE] [--json]
  leasehold elect   KEY [--ttl 15s] [--grace D] [--label L] [--once] [--store URL] [--token-file FILE] [--metrics-addr HOST:PORT] [--json] -- COMMAND [ARGS...]
  leasehold observe KEY [--poll D] [--ttl 15s] [--store URL] [--token-file FILE] [--json]
  leasehold migrate [--store URL] [--json]
  leasehold bench   [--store URL ...] [--clients 1,8,64] [--duration 10s] [--keys distinct|hot] [--json] [--markdown]
                    [--chart out.svg] [--title T] [--scale 1,1000,...] [--probes 200] [--herd 1,8,64] [--mem-pid PID,...]
                    [--handoffs 10] [--from results.jsonl ...] [--prims]
  leasehold serve   --listen HOST:PORT (--tls-cert FILE --tls-key FILE [--tls-client-ca FILE] | --insecure-loopback) [--token-file FILE] [--max-watches N] [--max-waits N] [--idle-timeout D] [--store URL] [--json]
  leasehold version [--json]
  leasehold help    [COMMAND]
`

var schemesText = "\nStore URLs:\n" + storeurl.UsageText() + "Each store's package documents the rest of its URL.\n"

const exitText = `
Exit status:
  0     success (run: the command's own exit status; 128+N if signal N ended it)
  1     the store failed or could not be reached
  2     bad usage: unknown flag, malformed key, TTL, wait, grace or store URL,
        or a one-shot acquire/renew/release on a store whose grants live in
        the process (use run)
  75    the lease is held by someone else (stderr says who, and for how long)
  76    the lease was lost (run: while the command ran, or run stopped the
        command because no renewal came before --grace was left; renew and
        release: the lease is no longer the caller's)
  126   run: the command could not be started; 127: it was not found
  128+N a signal N ended the command before the lease was acquired (130 for
        SIGINT, 143 for SIGTERM)
`

// metricsUsage documents --metrics-addr and --json, for run and elect.
const metricsUsage = `  --metrics-addr HOST:PORT
                 serve the lease's metrics in Prometheus's text format at
                 http://HOST:PORT/metrics while the command runs (elect:
                 across campaigns): acquires by outcome and under contention,
                 time waiting for the key, leases held, hold times, renewal
                 failures, losses by reason, store call latency and fence
                 rejections, every name starting with leasehold_ and every
                 series labelled with leasehold_key. Port 0 picks a free
                 port, named on stderr. An address that cannot be had exits
                 2 at once.
  --json         leasehold's own errors as one line of JSON on stderr (see
                 leasehold help); the command's output is untouched
`

// jsonUsage documents --json for the commands that print nothing else.
const jsonUsage = `  --json         errors as one line of JSON on stderr (see leasehold help)
`

// commandUsage holds the text of "leasehold help COMMAND" and of each
// command's -h.
var commandUsage = map[string]string{
	"run": runUsage,
	"acquire": `Usage: leasehold acquire KEY|--key KEY [--ttl 15s] [--wait D|forever] [--label L] [--json] [--store URL] [--token-file FILE]

Acquires KEY and exits, leaving the lease held until its TTL ends or it is
released: renew it with "leasehold renew" before then. It prints shell
exports that "eval" can take, so that renew and release need no flags:

  grant=$(leasehold acquire KEY) || exit
  eval "$grant"

or with --json one JSON object:

  export LEASEHOLD_KEY=KEY
  export LEASEHOLD_OWNER=OWNER     (the secret that proves ownership; keep it)
  export LEASEHOLD_TOKEN=N         (the fencing token)

  {"key":"KEY","owner":"OWNER","token":N,"label":"host:pid","ttl":"15s","ttl_ms":15000}

If the key is held it exits 75 and says on stderr who holds it and for how
long. On any failure (without --json) it prints a statement that makes
eval "$(leasehold acquire KEY)" exit the script with that status. Stores whose grants live in the acquiring process (PostgreSQL advisory
mode, Redlock, memory) are refused by acquire, renew and release: use
leasehold run. renew and release take --key, --owner and --token, or read them from
LEASEHOLD_KEY, LEASEHOLD_OWNER and LEASEHOLD_TOKEN.

Flags:
  --key KEY      the lease's key (required)
  --ttl D        lease duration (default 15s)
  --wait D       how long to wait for the key (default 0: try once;
                 "forever": until interrupted)
  --label L      how other holders see this one (default host:pid)
  --json         print JSON; errors as one line of JSON on stderr
  --store URL    the store (default $LEASEHOLD_STORE, else the embedded file)
  --token-file F the bearer token's file, when the store is a leasehold server
                 (leasehold+https://...; for it alone: other stores refuse it)
`,
	"renew": `Usage: leasehold renew [KEY|--key KEY] [--owner OWNER] [--token N] [--ttl 15s] [--store URL] [--token-file FILE] [--json]

Extends the lease to TTL from now if OWNER still holds KEY with token N.
Prints nothing on success; exits 76 if the lease is no longer the caller's
(expired and taken by someone else, or released).

Flags:
  --key KEY      the lease's key (default $LEASEHOLD_KEY)
  --owner OWNER  the owner printed by acquire (default $LEASEHOLD_OWNER)
  --token N      the token printed by acquire (default $LEASEHOLD_TOKEN)
  --ttl D        the new lease duration, from now (default 15s)
  --store URL    the store (default $LEASEHOLD_STORE, else the embedded file)
  --token-file F the bearer token's file, when the store is a leasehold server
                 (leasehold+https://...; for it alone: other stores refuse it)
` + jsonUsage,
	"release": `Usage: leasehold release [KEY|--key KEY] [--owner OWNER] [--token N] [--store URL] [--token-file FILE] [--json]

Ends the lease if OWNER still holds KEY with token N. Prints nothing on
success; exits 76 if the lease was no longer the caller's (it had expired and
been taken, or was already released), and never touches another holder's
lease.

Flags:
  --key KEY      the lease's key (default $LEASEHOLD_KEY)
  --owner OWNER  the owner printed by acquire (default $LEASEHOLD_OWNER)
  --token N      the token printed by acquire (default $LEASEHOLD_TOKEN)
  --store URL    the store (default $LEASEHOLD_STORE, else the embedded file)
  --token-file F the bearer token's file, when the store is a leasehold server
                 (leasehold+https://...; for it alone: other stores refuse it)
` + jsonUsage,
	"status": `Usage: leasehold status [KEY|--key KEY | --prefix P] [--json] [--store URL] [--token-file FILE]

Shows who holds KEY, or every held key that starts with P (all held keys
when neither is given), with the fencing token and the time left by the
store's clock, as a table or as JSON:

  {"key":"KEY","held":true,"label":"host:pid","token":7,"remaining":"12.3s","remaining_ms":12300}

--key prints one object ("held":false for a free key); --prefix prints an
array. Listing needs a store that can list keys (sqlite, memory, ...).

A holder labelled host:pid (the default label) whose process on this host
has exited, as leasehold acquire does once it has the lease, is marked
"(exited)" ("exited":true), with when its lease expires: it lasts until
then, or until leasehold release.

Flags:
  --key KEY      one key
  --prefix P     every held key starting with P
  --json         print JSON; errors as one line of JSON on stderr
  --store URL    the store (default $LEASEHOLD_STORE, else the embedded file)
  --token-file F the bearer token's file, when the store is a leasehold server
                 (leasehold+https://...; for it alone: other stores refuse it)
`,
	"elect": `Usage: leasehold elect KEY|--key KEY [--ttl 15s] [--grace D] [--label L] [--once] [--store URL] [--token-file FILE] [--metrics-addr HOST:PORT] [--json] -- COMMAND [ARGS...]

Campaigns in the election on KEY, waiting as long as it takes, and runs
COMMAND while this process leads, under the rules of "leasehold run" (see
leasehold help run): the command's process group is dead by the holder's
deadline, before the next leader can begin. The command gets LEASEHOLD_EPOCH
(the leadership's epoch: the lease's fencing token, higher than every
earlier leader's; fence writes with it) besides LEASEHOLD_KEY,
LEASEHOLD_TOKEN and LEASEHOLD_OWNER. When the command exits, elect exits
with its status and the next candidate leads. When the leadership is lost,
the command is stopped and elect campaigns again after a short random
pause; with --once it exits 76 instead. Campaigning on a key that someone
holds as a plain lease is allowed: it waits for that lease.

Flags:
  --key KEY      the election's key (or give it first)
  --ttl D        leadership lease duration (default 15s)
  --grace D      time between SIGTERM and SIGKILL (default min(10s, the most --ttl allows))
  --label L      how observers see this candidate (default host:pid)
  --once         after a loss, exit 76 rather than campaign again
  --store URL    the store (default $LEASEHOLD_STORE, else the embedded file)
  --token-file F the bearer token's file, when the store is a leasehold server
                 (leasehold+https://...; for it alone: other stores refuse it)
` + metricsUsage,
	"observe": `Usage: leasehold observe KEY|--key KEY [--json] [--poll D] [--ttl 15s] [--store URL] [--token-file FILE]

Prints the election on KEY: its state now, then one line per change (a new
leader with its epoch, or no leader), until interrupted (then it exits 0).
It uses the store's native watch where it has one (etcd); elsewhere it
reads the leader when a release is announced, when the leader's lease
would expire, and at least every --poll. A failed read is reported on
stderr and retried; a store that goes away ends observe with exit 1.

  2026-11-24T02:10:00Z KEY leader host:pid epoch 7
  2026-11-24T02:10:09Z KEY no leader
  {"time":"...","key":"KEY","leading":true,"label":"host:pid","epoch":7}

Flags:
  --key KEY      the election's key (or give it first)
  --json         print JSON lines; errors as one line of JSON on stderr
  --poll D       the longest between two reads without a native watch (default a third of --ttl)
  --ttl D        the candidates' --ttl (default 15s)
  --store URL    the store (default $LEASEHOLD_STORE, else the embedded file)
  --token-file F the bearer token's file, when the store is a leasehold server
                 (leasehold+https://...; for it alone: other stores refuse it)
`,
	"migrate": migrateUsage(storeurl.Stores()),
	"bench":   benchUsage, // in bench.go, next to the command
	"serve": `Usage: leasehold serve --listen HOST:PORT (--tls-cert FILE --tls-key FILE [--tls-client-ca FILE] | --insecure-loopback) [--token-file FILE] [--max-watches N] [--max-waits N] [--idle-timeout D] [--store URL] [--json]

Serves the store as a lock service: an HTTP/JSON API (/v1/; its OpenAPI
document at /v1/openapi.json) for acquire (with a bounded wait), renew,
release, holder, list and watch (server-sent events). Clients in any
language use the API; leasehold commands and Go programs name the server
as their store, leasehold+https://HOST:PORT (leasehold+http:// on
loopback), and need no credentials of the store behind it.

Once it listens it prints the URL (with --json: {"url":...,"store":...}),
and it serves until SIGINT or SIGTERM. A store whose grants belong to the
process that took them (the memory store, PostgreSQL advisory locks, ZooKeeper
and Consul sessions) has them kept by this server: they end when it stops.

  TLS is required, except on a loopback address with --insecure-loopback.
  --token-file names the bearer tokens the server accepts, one a line:
    NAME TOKEN VERBS PREFIX...
  VERBS are acquire, renew, release, read, watch, admin (comma-separated,
  or *), each PREFIX a key prefix (or * for every key); everything else is
  denied. SIGHUP loads the file again (a bad file keeps the old tokens).
  Clients name the token's file in the store URL:
  leasehold+https://HOST:PORT?token_file=PATH. Off loopback --token-file is
  required. Without it anyone who reaches the server can take and read
  leases (never release or renew another's: that needs its owner id).
  --tls-client-ca asks each client for a certificate and verifies it
  against the CAs of the file (another CA's fails the handshake); a rule
    NAME cert:COMMON-NAME VERBS PREFIX...
  says what a certificate with that subject common name may do. Clients
  give theirs in the store URL: ?cert_file=PATH&key_file=PATH (and
  ca_file=PATH for the server's CA). A bearer token, when sent, decides.

Flags:
  --listen HOST:PORT      the address to listen on (port 0: any free port)
  --tls-cert FILE         the server's certificate chain (PEM)
  --tls-key FILE          its private key (PEM)
  --tls-client-ca FILE    verify client certificates against these CAs (PEM)
  --insecure-loopback     serve plain HTTP; only on 127.0.0.1, ::1 or localhost
  --token-file FILE       the bearer tokens and their rules; reloaded on SIGHUP
  --max-watches N         the most watch streams open at once (default 10000); more get 503
  --max-waits N           the most acquires waiting at once for a held key (default 10000); more get 503
  --idle-timeout D        close a kept-alive connection idle this long (default 2m)
  --store URL             the store to serve (default $LEASEHOLD_STORE, else the embedded file)
  --json                  print the URL as JSON; errors as one line of JSON on stderr
`,
	"version": `Usage: leasehold version [--json] (or leasehold --version)

Prints the version the binary was built from: the module version stamped by
go install ...@vX ("(devel)" in a checkout), the version-control revision
and time the build recorded, and the Go version.

  {"version":"v0.1.0","revision":"0123456789ab","time":"...","go":"go1.26.0"}

Flags:
  --json         print JSON; errors as one line of JSON on stderr
`,
	"help": `Usage: leasehold help [COMMAND]

Prints the usage of leasehold, or of one command.
`,
}

// migrateUsage is the text of "leasehold help migrate": the stores it
// names are those of the store table that have a migration.
func migrateUsage(stores []storeurl.Kind) string {
	var b strings.Builder
	b.WriteString(`Usage: leasehold migrate [--store URL] [--json]

Creates what the store needs before its first lease, and upgrades it; it is
safe to run again. Run it once, with credentials that may create it. The
stores that need it:
`)
	for _, k := range stores {
		if k.Migrate != nil {
			fmt.Fprintf(&b, "  %-20s %s://\n", k.Title, strings.Join(k.Schemes, ":// or "))
		}
	}
	b.WriteString(`Other stores keep nothing to create: migrate says so and exits 0 (with
--json it prints {"migrated":false,"note":"..."}; after a migration,
{"migrated":true}).

Flags:
  --store URL    the store (default $LEASEHOLD_STORE; required)
  --json         print JSON; errors as one line of JSON on stderr
`)
	return b.String()
}
