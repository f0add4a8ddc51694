package harness

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// groupAlive reports whether a process of group pgid is alive and not a
// zombie, as /proc shows it.
func groupAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := strconv.Itoa(pgid)
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 > len(b) {
			continue
		}
		f := strings.Fields(string(b[i+2:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// Kill leaves nothing of the group alive: the leader, and children that
// would otherwise outlive it.
func TestKillEndsTheWholeGroup(t *testing.T) {
	p, err := startProc("group", []string{"sh", "-c", "sleep 300 & sleep 300 & wait"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	end := time.Now().Add(10 * time.Second)
	for !groupAlive(pid) {
		if time.Now().After(end) {
			t.Fatal("the group never showed up in /proc")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Kill()
	if groupAlive(pid) {
		t.Fatal("a member of the group is alive after Kill")
	}
	if p.Running() {
		t.Fatal("the leader has not exited after Kill")
	}
}

// A procSet's killAll ends every group it was given.
func TestKillAllEndsEveryGroup(t *testing.T) {
	var s procSet
	var ps []*testserver.Process
	var pids []int
	for range 3 {
		p, err := startProc("group", []string{"sh", "-c", "sleep 300 & wait"}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		s.add(p)
		ps = append(ps, p)
		pids = append(pids, p.Pid())
	}
	s.killAll()
	for i, p := range ps {
		if p.Running() || groupAlive(pids[i]) {
			t.Errorf("group %d is alive after killAll", i)
		}
	}
}
