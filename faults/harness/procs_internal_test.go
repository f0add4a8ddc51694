package harness

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// Kill leaves nothing of the group alive: the leader, and children that
// would otherwise outlive it.
func TestKillEndsTheWholeGroup(t *testing.T) {
	p, err := startProc("group", []string{"sh", "-c", "sleep 300 & sleep 300 & wait"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	end := time.Now().Add(10 * time.Second)
	for !testserver.GroupAlive(pid) {
		if time.Now().After(end) {
			t.Fatal("the group never showed up in /proc")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Kill()
	if testserver.GroupAlive(pid) {
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
		if p.Running() || testserver.GroupAlive(pids[i]) {
			t.Errorf("group %d is alive after killAll", i)
		}
	}
}
