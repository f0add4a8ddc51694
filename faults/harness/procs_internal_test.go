package harness

import (
	"testing"
	"time"
)

// Kill leaves nothing of the group alive: the leader, and children that
// would otherwise outlive it.
func TestKillEndsTheWholeGroup(t *testing.T) {
	p, err := StartProc(ProcSpec{Name: "group", Argv: []string{"sh", "-c", "sleep 300 & sleep 300 & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(10 * time.Second)
	for !groupAlive(p.Pid()) {
		if time.Now().After(end) {
			t.Fatal("the group never showed up in /proc")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Kill()
	if groupAlive(p.Pid()) {
		t.Fatal("a member of the group is alive after Kill")
	}
	if !p.Exited() {
		t.Fatal("the leader has not exited after Kill")
	}
}

// KillProcs ends every group it is given.
func TestKillProcsEndsEveryGroup(t *testing.T) {
	var ps []*Proc
	for range 3 {
		p, err := StartProc(ProcSpec{Name: "group", Argv: []string{"sh", "-c", "sleep 300 & wait"}})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	KillProcs(ps...)
	for i, p := range ps {
		if !p.Exited() || groupAlive(p.Pid()) {
			t.Errorf("group %d is alive after KillProcs", i)
		}
	}
}
