package bench

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
)

func sampleReport() Report {
	return Report{
		Cycles: []Result{
			{Store: "redis", Clients: 8, Keys: Distinct, Elapsed: 2 * time.Second, Cycles: 40000,
				Acquire: Summary{N: 40000, P50: 180 * time.Microsecond, P90: 300 * time.Microsecond, P99: 900 * time.Microsecond, Max: 4 * time.Millisecond},
				Release: Summary{N: 40000, P50: 150 * time.Microsecond, P99: 700 * time.Microsecond},
				Holders: 1, Renewals: 6, RenewalsPerSec: 3, Renew: Summary{N: 6, P50: 200 * time.Microsecond, P99: 300 * time.Microsecond},
				Handoff: Summary{N: 10, P50: 400 * time.Microsecond, P99: 2 * time.Millisecond}},
			{Store: `odd <name> & "quotes"`, Clients: 1, Keys: Hot, Elapsed: time.Second, Cycles: 10,
				Acquire: Summary{N: 10, P50: 12 * time.Millisecond, P90: 20 * time.Millisecond, P99: 30 * time.Millisecond},
				Errors:  2, FirstError: "acquire: boom", Partial: true},
		},
		Scale: []ScaleResult{
			{Store: "memory", Held: 1, Acquire: Summary{P50: 3 * time.Microsecond, P99: 9 * time.Microsecond}, CyclesPerSec: 90000, MemBytes: 1 << 20},
			{Store: "memory", Held: 100000, Acquire: Summary{P50: 4 * time.Microsecond, P99: 12 * time.Microsecond}, CyclesPerSec: 80000, MemBytes: 30 << 20, MemPerLease: 300},
		},
		Herd: []HerdResult{{Store: "redis", Waiters: 8, Releases: 20, Attempts: 170, WakeupsPerRelease: 8.5,
			Handoff: Summary{N: 20, P50: time.Millisecond, P99: 3 * time.Millisecond}}},
		References: []Reference{
			{Store: "Redis SET NX", Kind: "quoted", AcquireLow: 500 * time.Microsecond, AcquireHigh: 500 * time.Microsecond, CyclesPerSec: 100000, Source: "the field"},
			{Store: "Redlock", Kind: "quoted", AcquireLow: 3 * time.Millisecond, AcquireHigh: 5 * time.Millisecond, CyclesPerSec: 20000},
			{Store: "bsm/redislock", Kind: "peer", Clients: 8, CyclesPerSec: 30000, Source: "redis/bench"},
		},
	}
}

func TestJSONFields(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2+2+1+3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	required := map[string][]string{
		"cycles":    {"store", "clients", "cycles_per_sec", "acquire_p50_ms", "acquire_p99_ms", "errors", "acquire_p90_ms", "release_p50_ms", "release_p99_ms", "renewals_per_sec", "handoff_p50_ms", "keys", "partial"},
		"scale":     {"store", "held", "acquire_p50_ms", "acquire_p99_ms", "mem_bytes", "mem_per_lease_bytes", "errors"},
		"herd":      {"store", "waiters", "wakeups_per_release", "handoff_p50_ms", "errors"},
		"reference": {"store", "ref"},
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, line)
		}
		kind, _ := m["kind"].(string)
		fields, ok := required[kind]
		if !ok {
			t.Fatalf("line %d: kind %q", i+1, kind)
		}
		for _, f := range fields {
			if _, ok := m[f]; !ok {
				t.Errorf("line %d (%s): no field %q", i+1, kind, f)
			}
		}
	}
	var first map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	if first["store"] != "redis" || first["clients"] != 8.0 || first["cycles_per_sec"] != 20000.0 ||
		first["acquire_p50_ms"] != 0.18 || first["acquire_p99_ms"] != 0.9 || first["errors"] != 0.0 {
		t.Errorf("first line values: %v", first)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	in := sampleReport()
	var b bytes.Buffer
	if err := WriteJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	var out Report
	if err := ReadJSON(strings.NewReader("# a comment\n\n"+b.String()), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Cycles) != 2 || len(out.Scale) != 2 || len(out.Herd) != 1 || len(out.References) != 3 {
		t.Fatalf("read back %d/%d/%d/%d records", len(out.Cycles), len(out.Scale), len(out.Herd), len(out.References))
	}
	c := out.Cycles[0]
	if c.Store != "redis" || c.Clients != 8 || c.CyclesPerSec() != 20000 || c.Acquire.P50 != 180*time.Microsecond ||
		c.Acquire.P99 != 900*time.Microsecond || c.Handoff.N != 10 {
		t.Errorf("cycles read back as %+v", c)
	}
	if h := out.Cycles[1]; h.Keys != Hot || !h.Partial || h.Errors != 2 || h.FirstError != "acquire: boom" {
		t.Errorf("second cycles record read back as %+v", h)
	}
	if s := out.Scale[1]; s.Held != 100000 || s.MemPerLease != 300 || s.Acquire.P99 != 12*time.Microsecond {
		t.Errorf("scale read back as %+v", s)
	}
	if h := out.Herd[0]; h.WakeupsPerRelease != 8.5 || h.Handoff.P99 != 3*time.Millisecond {
		t.Errorf("herd read back as %+v", h)
	}
	if r := out.References[1]; r.Kind != "quoted" || r.AcquireLow != 3*time.Millisecond || r.AcquireHigh != 5*time.Millisecond {
		t.Errorf("reference read back as %+v", r)
	}
	// Writing what was read gives the same bytes.
	var again bytes.Buffer
	if err := WriteJSON(&again, out); err != nil {
		t.Fatal(err)
	}
	if again.String() != b.String() {
		t.Errorf("second write differs:\n%s\nvs\n%s", again.String(), b.String())
	}
}

func TestReadJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "{nope", "line 1"},
		{"unknown kind", `{"kind":"weird"}`, "unknown kind"},
		{"misspelt field", "\n" + `{"store":"x","cycels_per_sec":3}`, "line 2"},
		{"bad keys", `{"store":"x","keys":"cold"}`, "cold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rep Report
			err := ReadJSON(strings.NewReader(tc.in), &rep)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	var rep Report
	if err := ReadJSON(strings.NewReader(`{"store":"hand","clients":2,"cycles_per_sec":1500,"acquire_p50_ms":0.5}`), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.Cycles[0].CyclesPerSec(); got != 1500 {
		t.Errorf("a hand-written line's rate read back as %v", got)
	}
}

// wellFormed parses an SVG document completely and returns its root
// element's name and all its character data.
func wellFormed(t *testing.T, doc []byte) (string, string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var root string
	var text strings.Builder
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, doc)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = tk.Name.Local
				if tk.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", tk.Name.Space)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			text.Write(tk)
			text.WriteByte('\n')
		}
	}
	if depth != 0 {
		t.Errorf("unbalanced elements: depth %d at the end", depth)
	}
	return root, text.String()
}

func TestSVG(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, sampleReport(), "Lease stores & <friends>"); err != nil {
		t.Fatal(err)
	}
	root, text := wellFormed(t, b.Bytes())
	if root != "svg" {
		t.Errorf("root element %q", root)
	}
	for _, want := range []string{
		"Lease stores & <friends>",
		"redis, 8 clients", `odd <name> & "quotes", 1 client, hot key *`,
		"Redlock (quoted)", "bsm/redislock, 8 clients (peer)",
		"0.18 / 0.90", "20,000", "3.00 / 5.00",
		"Acquire latency", "Throughput", "memory, 100,000 held", "redis, 8 waiting", "8.5",
		"measured by leasehold bench", "figure quoted in the field",
		"0.1 ms", "1 ms", "10k",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("SVG text lacks %q", want)
		}
	}
}

func TestSVGEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, Report{}, "nothing"); err != nil {
		t.Fatal(err)
	}
	if _, text := wellFormed(t, b.Bytes()); !strings.Contains(text, "no results") {
		t.Errorf("empty chart says: %s", text)
	}
}

func TestTables(t *testing.T) {
	rep := sampleReport()
	var text, md bytes.Buffer
	if err := WriteTable(&text, rep, Text); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&md, rep, Markdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cycles/s", "acquire p50 ms", "handoff p50 ms", "20,000", "0.18", "0.90", "redis",
		"odd <name> & \"quotes\" *", "held leases", "100,000", "300 B", "attempts/release", "8.5", "Redis SET NX", "3.00-5.00", "interrupted"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text table lacks %q:\n%s", want, text.String())
		}
	}
	// Text columns line up: every row of the cycles table is as wide as
	// its header or narrower, and the numbers end in the same column.
	lines := strings.Split(text.String(), "\n")
	var head, row string
	for i, l := range lines {
		if strings.HasPrefix(l, "store") && strings.Contains(l, "cycles/s") {
			head, row = l, lines[i+1]
			break
		}
	}
	if i, j := strings.Index(head, "cycles/s")+len("cycles/s"), strings.Index(row, "20,000")+len("20,000"); i != j {
		t.Errorf("cycles/s column ends at %d in the header and %d in the row:\n%s\n%s", i, j, head, row)
	}
	mdRows := 0
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, "|") {
			if !strings.HasSuffix(l, "|") {
				t.Errorf("markdown row not closed: %q", l)
			}
			mdRows++
		}
	}
	// 4 tables: header + rule + rows each.
	if want := (2 + 2) + (2 + 2) + (2 + 1) + (2 + 3); mdRows != want {
		t.Errorf("%d markdown rows, want %d:\n%s", mdRows, want, md.String())
	}
}

func TestFailures(t *testing.T) {
	rep := Report{
		Cycles: []Result{{Store: "redis", Clients: 8}, {Store: "redis", Clients: 64, Errors: 2, FirstError: "acquire: boom"}},
		Scale:  []ScaleResult{{Store: "memory", Held: 1000, Errors: 1, FirstError: "hold: full"}},
		Herd:   []HerdResult{{Store: "etcd", Waiters: 8, Errors: 5, FirstError: "release: gone"}, {Store: "etcd", Waiters: 64}},
	}
	got := rep.Failures()
	want := []Failure{
		{What: "redis with 64 clients", Errors: 2, First: "acquire: boom"},
		{What: "memory with 1000 leases held", Errors: 1, First: "hold: full"},
		{What: "etcd with 8 waiters", Errors: 5, First: "release: gone"},
	}
	if len(got) != len(want) {
		t.Fatalf("Failures() = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Failures()[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if f := (Report{}).Failures(); len(f) != 0 {
		t.Errorf("an empty report has failures: %+v", f)
	}
}
