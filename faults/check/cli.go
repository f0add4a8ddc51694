package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

// CLIResult is the outcome of a run of the CLI workload.
type CLIResult struct {
	Store    string
	Seed     uint64
	TTL      time.Duration
	Seconds  float64
	Commands int // commands that started
	Writes   int // writes they issued
	Stopped  int // commands that did not finish their writes (killed by a fault's consequences or at the end of the run)
	Episodes map[string]int
	Bit      map[string]int // episodes whose target's command was stopped
	// AfterGrant counts writes issued by a command after a later holder's
	// grant (the target: 0); Worst is how late the latest of them was.
	AfterGrant int
	Worst      time.Duration
	// Margin is the smallest gap between a command's last write and the
	// next holder's start.
	Margin  time.Duration
	Fenced  int // writes the resource refused as stale
	Invalid []string
	Missed  []string
	Notes   []string
	Dir     string
}

// CLI fills res's counts from the CLI workload's history: the
// commands' starts and writes (recorded by RunCLIChild) and the resource's
// refusals. A command's successor is the command with the next higher
// token; its start bounds its holder's grant from above.
func CLI(evs []history.Event, res *CLIResult) {
	type command struct {
		id       string
		token    uint64
		start    int64
		writes   []int64
		finished bool
	}
	byID := map[string]*command{}
	get := func(id string) *command {
		c := byID[id]
		if c == nil {
			c = &command{id: id}
			byID[id] = c
		}
		return c
	}
	for _, e := range evs {
		switch {
		case e.Kind == history.EvFenced:
			res.Fenced++
		case !strings.HasPrefix(e.Src, "c"):
		case e.Kind == history.EvStart:
			c := get(e.Src)
			c.token, c.start = e.Token, e.T0
		case e.Kind == history.EvFWrite:
			c := get(e.Src)
			c.writes = append(c.writes, e.T0)
		case e.Kind == history.EvReleased:
			get(e.Src).finished = true
		}
	}
	var cs []*command
	for _, c := range byID {
		if c.start != 0 {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].token < cs[j].token })
	res.Commands = len(cs)
	res.Margin = -1
	for i, c := range cs {
		res.Writes += len(c.writes)
		if !c.finished {
			res.Stopped++
		}
		if i > 0 && cs[i-1].token == c.token {
			res.Notes = append(res.Notes, fmt.Sprintf("commands %s and %s ran with the same token %d", cs[i-1].id, c.id, c.token))
		}
		if i+1 == len(cs) || len(c.writes) == 0 {
			continue
		}
		next := cs[i+1].start
		for _, w := range c.writes {
			if w > next {
				res.AfterGrant++
				res.Worst = max(res.Worst, time.Duration(w-next))
			}
		}
		last := c.writes[len(c.writes)-1]
		if m := time.Duration(next - last); res.Margin < 0 || m < res.Margin {
			res.Margin = m
		}
	}
}

// JudgeCLI decides validity and missed targets.
func JudgeCLI(r *CLIResult) {
	if r.AfterGrant > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("writes by a command after the next holder's grant: %d (the latest %s after it)", r.AfterGrant, r.Worst.Round(time.Millisecond)))
	}
	for _, c := range CLIFaults {
		if r.Episodes[c.ID] > 0 && r.Bit[c.ID] == 0 {
			r.Invalid = append(r.Invalid, fmt.Sprintf("%s (%s) never stopped the targeted command", c.ID, c.Description))
		}
	}
	if r.Commands < 2 {
		r.Invalid = append(r.Invalid, "fewer than two commands ran")
	}
}
