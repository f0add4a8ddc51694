package report

import "strings"

// KeptHeading starts the part of docs/safety.md that this package does not
// write: its Fuzzing section, kept by hand and by scripts/fuzz --report. A
// page written over a previous one keeps that part, from this heading line
// to the end of the file (KeepTail).
const KeptHeading = "## Fuzzing"

// KeepTail returns the page md followed by the kept part of old, the page it
// replaces: from the line KeptHeading to old's end. When old has no such
// line, md is returned as it is.
func KeepTail(md, old string) string {
	i := strings.Index("\n"+old, "\n"+KeptHeading+"\n")
	if i < 0 {
		return md
	}
	return strings.TrimRight(md, "\n") + "\n\n" + old[i:]
}
