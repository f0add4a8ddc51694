package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCmdFaultNotes renders the results of runs made before F9k
// and F17 existed (report/testdata/missing-fault.jsonl) with the
// harness's own knowledge of the stores: redis and etcd list F9k as not
// run because it applies to kube alone, etcd lists F17 as missing from
// the fault table at its runs' commit, and kube's F5 carries its caveat.
func TestReportCmdFaultNotes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "safety.md")
	if _, err := reportCmd([]string{"-out", out, "../../report/testdata/missing-fault.jsonl"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for store, wants := range map[string][]string{
		"redis": {"): not run: the store's server keeps no database of its own to restart under it (only the kube store's apiserver does: its etcd)\n"},
		"etcd": {"): not run: the store's server keeps no database of its own to restart under it",
			"- F17 (holder wall clock", "): not run: not in the fault table when these runs were made (results from commit e998c8c)\n"},
		"kube": {"- F5 (replies dropped after the store applied the request): acts only in part on this store: ", "TLS handshake"},
	} {
		_, s, _ := strings.Cut(md, "\n### "+store+"\n")
		s, _, _ = strings.Cut(s, "\n### ")
		for _, w := range wants {
			if !strings.Contains(s, w) {
				t.Errorf("%s: lacks %q", store, w)
			}
		}
		if store == "kube" && strings.Contains(s, "- F9k (the database") {
			t.Errorf("kube: lists F9k as not run, but ran it")
		}
	}
}
