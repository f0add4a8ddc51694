package main

import (
	"slices"
	"strings"
	"testing"
)

// Flags go before or after the key, as etcdctl takes them, on every
// command: each line of a case parses to the same flags and command.
func TestFlagsAnywhere(t *testing.T) {
	cases := []struct {
		cmd     string
		want    string // the flags set, as setFlags lists them
		command []string
		lines   [][]string
	}{
		{"run", `--key="k" --ttl="5s"`, []string{"sh", "-c", "true"}, [][]string{
			{"k", "--ttl", "5s", "--", "sh", "-c", "true"},
			{"--ttl", "5s", "k", "--", "sh", "-c", "true"},
			{"--ttl=5s", "k", "--", "sh", "-c", "true"},
			{"-ttl", "5s", "--key", "k", "--", "sh", "-c", "true"},
			{"k", "--key=k", "--ttl", "5s", "--", "sh", "-c", "true"},
		}},
		{"elect", `--key="k" --once="true" --ttl="3s"`, []string{"--ttl", "9s"}, [][]string{
			{"k", "--once", "--ttl", "3s", "--", "--ttl", "9s"},
			{"--once", "k", "--ttl", "3s", "--", "--ttl", "9s"},
			{"--ttl", "3s", "--once", "k", "--", "--ttl", "9s"},
		}},
		{"acquire", `--json="true" --key="jobs/a" --wait="forever"`, nil, [][]string{
			{"jobs/a", "--wait", "forever", "--json"},
			{"--wait", "forever", "jobs/a", "--json"},
			{"--json", "--wait=forever", "jobs/a"},
			{"--json", "--wait=forever", "--", "jobs/a"},
		}},
		{"renew", `--key="k" --owner="o" --token="7" --ttl="1m0s"`, nil, [][]string{
			{"k", "--owner", "o", "--token", "7", "--ttl", "1m"},
			{"--owner", "o", "k", "--token", "7", "--ttl", "1m"},
			{"--owner", "o", "--token", "7", "--ttl", "1m", "k"},
		}},
		{"release", `--key="-odd" --owner="o" --token="7"`, nil, [][]string{
			{"--owner", "o", "--token", "7", "--", "-odd"},
			{"--key", "-odd", "--owner", "o", "--token", "7"},
			{"--owner=o", "--key=-odd", "--token=7"},
		}},
		{"status", `--json="true" --key="k" --store="memory://"`, nil, [][]string{
			{"k", "--json", "--store", "memory://"},
			{"--json", "k", "--store", "memory://"},
			{"--store", "memory://", "--json", "k"},
		}},
		{"observe", `--json="true" --key="k" --poll="1s"`, nil, [][]string{
			{"k", "--json", "--poll", "1s"},
			{"--poll", "1s", "k", "--json"},
		}},
		{"migrate", `--json="true" --store="memory://"`, nil, [][]string{
			{"--store", "memory://", "--json"},
			{"--json", "--store=memory://"},
		}},
		{"bench", `--clients="1" --json="true" --store="memory:// sqlite:///x.db"`, nil, [][]string{
			{"--store", "memory://", "--clients", "1", "--json", "--store", "sqlite:///x.db"},
			{"--json", "--store=memory://", "--store=sqlite:///x.db", "--clients=1"},
		}},
		{"version", `--json="true"`, nil, [][]string{{"--json"}, {"-json=true"}}},
	}
	for _, c := range cases {
		for _, args := range c.lines {
			fs := flagSet(t, c.cmd)
			line, err := parseLine(fs, c.cmd, args)
			if err != nil {
				t.Errorf("leasehold %s %q: %v", c.cmd, args, err)
				continue
			}
			if got := setFlags(fs); got != c.want || !slices.Equal(line.command, c.command) {
				t.Errorf("leasehold %s %q: flags %s, command %q; want %s, %q", c.cmd, args, got, line.command, c.want, c.command)
			}
		}
	}
}

// A real run with the flags before the key, and the one-shot commands with
// the key last.
func TestFlagsBeforeKeyRun(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.lh(nil, "run", "--ttl", "5s", "jobs/late", "--", "sh", "-c", `echo "$LEASEHOLD_KEY $LEASEHOLD_TOKEN"`)
	if code != 0 || strings.TrimSpace(out) != "jobs/late 1" {
		t.Fatalf("run --ttl 5s KEY -- COMMAND exited %d, output %q: %s", code, out, stderr)
	}
	code, out, stderr = e.lh(nil, "acquire", "--ttl", "30s", "--json", "jobs/late")
	if code != 0 {
		t.Fatalf("acquire --ttl 30s --json KEY exited %d: %s", code, stderr)
	}
	g := decode[grantJSON](t, "acquire", out)
	if g.Key != "jobs/late" || g.Token != 2 {
		t.Fatalf("acquire --ttl 30s --json KEY granted %+v", g)
	}
	code, out, stderr = e.lh(nil, "status", "--json", "jobs/late")
	if h := decode[holderJSON](t, "status", out); code != 0 || !h.Held || h.Token != 2 {
		t.Fatalf("status --json KEY exited %d with %q: %s", code, out, stderr)
	}
	if code, _, stderr := e.lh(nil, "release", "--owner", g.Owner, "--token", "2", "jobs/late"); code != 0 {
		t.Fatalf("release --owner O --token N KEY exited %d: %s", code, stderr)
	}
	e.checkFree(t, "jobs/late")
}
