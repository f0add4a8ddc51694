package report

import (
	"slices"
	"strings"

	"github.com/leasehold-go/leasehold/faults/check"
)

// StaticFault says what is known of fault class id on store without a
// run (harness.StaticFault): why it never applies to the store (notRun),
// and a caveat on how it applies (note); "" when not known.
type StaticFault func(store, id string) (notRun, note string, err error)

// AddFaultNotes completes each store's notes so that every class of
// today's fault table (check.Faults) has its line: a class its pooled
// results do not mention (neither injected nor noted as not run, as F9k
// in the results made before it existed) is not run, for the reason
// static gives (the class does not apply to the store) or else because it
// was not in the fault table when the runs were made; and a class
// injected with a caveat from static gets the caveat (kube: F5). The
// lines go among the notes in the fault table's order. static may be nil.
func AddFaultNotes(sums []*StoreSummary, static StaticFault) {
	for _, s := range sums {
		if s.Runs == 0 {
			continue
		}
		for _, f := range check.Faults {
			notRun, note := "", ""
			if static != nil {
				var err error
				if notRun, note, err = static(s.Store, f.ID); err != nil {
					notRun, note = "", ""
				}
			}
			switch {
			case s.Episodes[f.ID] > 0 && note != "":
				s.insertNote(f.ID, f.ID+" ("+f.Description+"): "+note)
			case s.Episodes[f.ID] > 0 || s.notes(f.ID):
			case notRun != "":
				s.insertNote(f.ID, f.ID+" ("+f.Description+"): not run: "+notRun)
			default:
				s.insertNote(f.ID, f.ID+" ("+f.Description+"): not run: not in the fault table when these runs were made ("+s.commits()+")")
			}
		}
	}
}

// notes reports whether a note of s is about fault class id.
func (s *StoreSummary) notes(id string) bool {
	return slices.ContainsFunc(s.Notes, func(n string) bool { return strings.HasPrefix(n, id+" (") })
}

// commits names the commits the runs were made at, as far as they say.
func (s *StoreSummary) commits() string {
	if len(s.Commits) == 0 {
		return "the results record no commit; the page's header names the runs"
	}
	if len(s.Commits) == 1 {
		return "results from commit " + s.Commits[0]
	}
	return "results from commits " + strings.Join(s.Commits, ", ")
}

// insertNote adds note, about fault class id, before the first note about
// a class after id in the fault table; once.
func (s *StoreSummary) insertNote(id, note string) {
	if slices.Contains(s.Notes, note) {
		return
	}
	at := faultIndex(id)
	for i, n := range s.Notes {
		if faultIndex(n[:max(strings.Index(n, " ("), 0)]) > at {
			s.Notes = slices.Insert(s.Notes, i, note)
			return
		}
	}
	s.Notes = append(s.Notes, note)
}

// faultIndex is the place of class id in check.Faults, or -1.
func faultIndex(id string) int {
	return slices.IndexFunc(check.Faults, func(f check.Fault) bool { return f.ID == id })
}
