// Package netlab is the fault harness's network lab: a private network
// namespace for the whole run (Enter), and in it, labs of member
// namespaces joined by a bridge (New), whose links a fault can cut (Cut,
// Isolate) and heal (Heal). The consensus stores' members run one per
// member namespace (Lab.Prefix), so that the member partitions (F13-F16)
// cut the links between members while the holders, in the run's namespace,
// still reach every member through their proxies.
//
// Nothing touches the host's network: the lab lives inside the namespace
// Enter made, which vanishes with the run's processes. It needs root (or
// the capabilities to unshare a network namespace), ip (iproute2), nft
// (nftables) and unshare (util-linux): scripts/install/nftables.sh.
// LEASEHOLD_NETLAB=off runs without it (the member partitions do not run
// then).
package netlab
