package check

// Fault is a fault class the harness injects: its ID, as the histories
// (history.Event.Fault) and the tables name it, and what it does. The
// harness's table of injectors (package harness) has one row per class of
// Faults, in the same order; the report lists the classes from Faults.
type Fault struct {
	ID          string
	Description string
}

// The main workload's fault IDs.
const (
	F1  = "F1"
	F2  = "F2"
	F3  = "F3"
	F4  = "F4"
	F5  = "F5"
	F5c = "F5c"
	F6  = "F6"
	F7  = "F7"
	F8  = "F8"
	F9  = "F9"
	F9b = "F9b"
	F9m = "F9m"
	// F9k restarts the database under the store's server (Kubernetes:
	// the apiserver's etcd), the server left running.
	F9k = "F9k"
	F10 = "F10"
	F11 = "F11"
	F12 = "F12"
	// F12b and F17 are the holder's clock faults within the design's
	// claims (issue 31): a rate error within Options.Rho, and a step of
	// the holder's wall clock. F13-F16 cut the links between the members
	// of a 3-member cluster (faults/netlab).
	F12b = "F12b"
	F13  = "F13"
	F14  = "F14"
	F15  = "F15"
	F16  = "F16"
	F17  = "F17"
)

// Faults are the main workload's fault classes, in the order of the report.
var Faults = []Fault{
	{F1, "holder SIGSTOP for 0.3 x TTL"},
	{F2, "holder SIGSTOP for 1-3 x TTL, and once per pass for the takeover bound + 1-1.5 x TTL"},
	{F3, "holder SIGKILL and respawn"},
	{F4, "replies delayed by 1.5 x TTL"},
	{F5, "replies dropped after the store applied the request"},
	{F5c, "an acquire's reply dropped after the store granted it; the statements the holder sent in the next second (its clean-up among them) held back until a retry of the holder won the key again (the other holders' statements on that key held back until then too, so that the retry is its only contender): a late clean-up"},
	{F6, "partition of a holder from the store for 2 x TTL, then heal"},
	{F7, "connection resets every TTL/4 for 2 x TTL"},
	{F8, "store SIGSTOP for 2 x TTL"},
	{F9, "store SIGKILL and restart"},
	{F9b, "store SIGKILL and restart without its data"},
	{F9m, "a holder cut from one master; once that master's copy of its key expired, another master restarted empty (Redlock's split majority)"},
	{F9k, "the database under the store's server (Kubernetes: the apiserver's etcd) SIGKILLed and restarted on its data, the server left running"},
	{F10, "leader SIGKILL (3-node cluster), restart after 2 x TTL"},
	{F11, "store server clock step"},
	{F12, "holder clock 40% slow (injected clock), partitioned for 2 x TTL: BEYOND the design's claim (Options.Rho, 1%); the holder believes in its lease for 1.65 x the store's TTL, so concurrent holders are expected and it shows the fence still refuses the stale writes"},
	{F12b, "holder clock 0.5% slow (injected clock), partitioned for 2 x TTL: WITHIN the design's claim (Options.Rho, 1%); its operations are held to the true clock's deadline"},
	{F13, "the leader cut from both followers (3-member cluster) until a new leader is elected, 2.5 x TTL at least (Consul: 10 s), then healed; the holders still reach every member"},
	{F14, "one follower cut from the others for 2.5 x TTL (Consul: 10 s), holders' clients still attached to it (pinned to it; Consul: the front agent every holder talks through), then healed"},
	{F15, "a bridge for 2.5 x TTL (Consul: 10 s): the leader and a follower cut from each other, the third member sees both; then healed"},
	{F16, "flapping member partitions: 8 random cuts, a new one every TTL/2 (Consul: every 1.5 s), then healed"},
	{F17, "holder wall clock stepped forward by d = 3-5 x TTL, then to -d, then back to 0, while it holds (time.Now's wall reading only, monotonic clock untouched: a holder built with a patched time package)"},
}

// The CLI workload's fault IDs.
const (
	C1 = "C1"
	C2 = "C2"
	C3 = "C3"
)

// CLIFaults are the CLI workload's fault classes: they hit the leasehold
// run process of the holder, not the command it runs.
var CLIFaults = []Fault{
	{C1, "leasehold SIGSTOP for 1.5-2.5 x TTL"},
	{C2, "leasehold SIGKILL"},
	{C3, "the holder's renewals stall for 2 x TTL"},
}

// Describe returns what fault class id does, from Faults or CLIFaults; ""
// for an unknown id.
func Describe(id string) string {
	for _, f := range append(append([]Fault(nil), Faults...), CLIFaults...) {
		if f.ID == id {
			return f.Description
		}
	}
	return ""
}

// IDs returns the IDs of fs, in order.
func IDs(fs []Fault) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}
