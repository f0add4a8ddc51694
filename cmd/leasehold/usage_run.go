package main

// runUsage is the text of "leasehold help run" and of run -h (see
// commandUsage).
const runUsage = `Usage: leasehold run KEY|--key KEY [--read|--write] [--ttl 15s] [--wait D|forever] [--slots N] [--min-hold D] [--tick D] [--grace D] [--label L] [--store URL] [--token-file FILE] [--metrics-addr HOST:PORT] [--json] -- COMMAND [ARGS...]

Acquires KEY, runs COMMAND with LEASEHOLD_KEY, LEASEHOLD_TOKEN (the fencing
token, in decimal) and LEASEHOLD_OWNER in its environment, renews the lease
while the command runs (at about a third of the TTL), releases it when the
command exits, and exits with the command's exit status.

  --wait 0 tries once; a duration waits up to that long for the holder to go;
  --wait forever waits until the lease is acquired or leasehold is interrupted.
  If the lease cannot be had, leasehold exits 75 and says on stderr who holds
  it and for how long.

  --slots N makes KEY a semaphore of N slots: at most N commands run at once
  over KEY. The command holds the lease on one free slot, KEY/slot/I, with
  LEASEHOLD_SLOT=I, LEASEHOLD_KEY the slot's key and LEASEHOLD_TOKEN its
  token (tokens increase per slot: fence by LEASEHOLD_KEY); --wait waits for
  any slot. Every user of KEY must pass the same N; a run that finds its
  slots full and slot N held fails (a user with more slots). A store whose
  tokens are not fences (Redlock) is refused.

  The rule: the command's process group is dead before the store can grant
  the key to anyone else. The holder's deadline (the last successful
  renewal's send time + TTL x 0.99 - 5ms) comes before the store's expiry;
  when the time left falls to --grace and no renewal has moved it, the group
  gets SIGTERM, and SIGKILL at the deadline. A refused renewal sends SIGTERM
  at once and SIGKILL after --grace or at the deadline, whichever is first.
  Either way leasehold exits 76. When the command exits, anything left in
  its group is killed before the lease is released. A watchdog process
  holds the same deadline and acts when leasehold cannot: stopped (SIGSTOP,
  Ctrl-Z), starved, or killed, in which case it kills the group at once (on
  Linux the command also gets a parent-death SIGKILL).

  --grace is at most a quarter of the time between the latest first renewal
  (1.1 x TTL/3) and the holder's deadline (TTL x 0.99 - 5ms), about TTL/6,
  so that a hung first renewal and its retry both end before termination
  starts; a longer one is refused. The default is the smaller of 10s and
  that bound (2.336s at --ttl 15s). For a longer grace, use a longer TTL
  (about 6.5 times the grace).

  The command runs in its own process group. SIGINT, SIGTERM, SIGHUP and
  SIGQUIT sent to leasehold are passed on to the group; leasehold then waits
  for the command and releases the lease. In a terminal the command's group
  is the foreground one: it can read the terminal, Ctrl-C reaches it
  directly, and Ctrl-Z stops it and leasehold together (stopped past the
  deadline, the command is killed as above). On Windows there are no
  process groups: signals and the deadline end the command itself, not the
  processes it started.

  Pass the token to whatever the command writes to, and have that resource
  reject stale tokens: a lease alone cannot stop a paused holder from acting.
  On a store whose tokens are not fences (Redlock) leasehold warns once on
  stderr.

  --read and --write take KEY's read-write lock (package rwlock) instead of
  a plain lease on KEY: readers share it, a writer holds it alone, and a
  waiting writer stops new readers. The command also gets LEASEHOLD_MODE
  (read or write) and LEASEHOLD_EPOCH (the write epoch); LEASEHOLD_KEY and
  LEASEHOLD_TOKEN are the held lease's (a reader's slot KEY/r/N, the
  writer's KEY/w). Have the resource check (mode, epoch, token) as
  rwlock.Guard does.

  --min-hold D keeps KEY held for at least D after the grant (ShedLock's
  lockAtLeastFor): when the command exits sooner, leasehold says so on
  stderr, keeps renewing the lease until D has passed, then releases it and
  exits with the command's status. A signal during that hold releases the
  key at once and exits 128+N; so does a command that could not be started
  (126, 127: the job did not run). A run killed outright (SIGKILL, a crash)
  frees the key at its TTL: use a TTL of at least D to keep it through that.

  --tick D runs a command scheduled on every node (cron on each host) once
  per tick of period D: the key (and LEASEHOLD_KEY) is KEY/TICK, TICK the
  tick nearest now in UTC (leasehold.TickKey: KEY/2026-11-27T15:00:00Z for
  --tick 1h at 15:00:20), and it is held until the tick ends, half a period
  after TICK, so that a node that comes late in the tick finds it held and
  does not run the job again; it exits 75. (--min-hold D2 sets the hold
  instead; one shorter than the rest of the tick lets a late node run the
  job again.) --wait with --tick ends by the tick's end: a waiting node
  takes over only from a holder that crashed or was stopped within the
  tick. A node whose clock or schedule is off by half a period or more
  keys another tick. Treat 75 as "another node has this tick" (cron:
  leasehold run ... || [ $? -eq 75 ]).
  Neither flag combines with --slots, --read or --write.

Flags:
  --key KEY      the lease's key (required)
  --read         take KEY's read-write lock for reading (shared)
  --write        take KEY's read-write lock for writing (alone)
  --ttl D        lease duration (default 15s)
  --wait D       how long to wait for the key (default 0: try once;
                 "forever": until interrupted)
  --slots N      hold one of N slots of KEY (a semaphore; default 0: KEY itself)
  --min-hold D   keep KEY held for at least D after the grant (at most 24h)
  --tick D       one run per tick of period D (1s to 168h): the key is KEY/TICK,
                 held until the tick ends
  --grace D      time between SIGTERM and SIGKILL (default min(10s, the most --ttl allows))
  --label L      how other holders see this one (default host:pid)
  --store URL    the store (default $LEASEHOLD_STORE, else the embedded file)
  --token-file F the bearer token's file, when the store is a leasehold server
                 (leasehold+https://...; for it alone: other stores refuse it)
` + metricsUsage
