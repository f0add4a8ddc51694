package leasehold

import (
	"context"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// capabilityTypes returns the optional capabilities WrapStore knows, bit i
// at index i: the fields of storeParts after Store.
func capabilityTypes() []reflect.Type {
	st := reflect.TypeFor[storeParts]()
	var out []reflect.Type
	for i := 1; i < st.NumField(); i++ {
		out = append(out, st.Field(i).Type)
	}
	return out
}

// TestWrapStoreKnowsEveryCapability fails when the store contract gains an
// optional interface that wrap_gen.go does not know (run go generate): every
// interface store.go declares besides Store, and every interface of the
// package documented as an optional capability, must be in storeParts.
func TestWrapStoreKnowsEveryCapability(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/leasehold-go/leasehold")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ty := range pkg.Types {
		_, iface := ty.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.InterfaceType)
		inContract := fset.Position(ty.Decl.Pos()).Filename == "store.go" && ty.Name != "Store"
		if iface && (inContract || strings.Contains(ty.Doc, "optional capability")) {
			want = append(want, ty.Name)
		}
	}
	var got []string
	for _, c := range capabilityTypes() {
		got = append(got, c.Name())
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("WrapStore knows the optional capabilities %v; the contract declares %v (run go generate)", got, want)
	}
}

// probe implements the Store methods and every optional capability,
// noting each call as "name.Method".
type probe struct {
	name  string
	calls *[]string
}

func (p probe) note(m string) { *p.calls = append(*p.calls, p.name+"."+m) }

func (p probe) Acquire(context.Context, AcquireRequest) (Grant, error) {
	p.note("Acquire")
	return Grant{}, nil
}
func (p probe) Renew(context.Context, Grant) (Grant, error) { p.note("Renew"); return Grant{}, nil }
func (p probe) Release(context.Context, Grant) error        { p.note("Release"); return nil }
func (p probe) Holder(context.Context, string) (Holder, error) {
	p.note("Holder")
	return Holder{}, nil
}
func (p probe) Info() Info   { p.note("Info"); return Info{} }
func (p probe) Close() error { p.note("Close"); return nil }
func (p probe) Subscribe(context.Context, string) (<-chan struct{}, func(), error) {
	p.note("Subscribe")
	return nil, nil, nil
}
func (p probe) Watch(context.Context, string) (<-chan struct{}, func(), error) {
	p.note("Watch")
	return nil, nil, nil
}
func (p probe) AcquireWait(context.Context, AcquireRequest) (Grant, error) {
	p.note("AcquireWait")
	return Grant{}, nil
}
func (p probe) RenewMany(context.Context, []Grant) ([]RenewResult, error) {
	p.note("RenewMany")
	return nil, nil
}
func (p probe) LostReason(Grant) error { p.note("LostReason"); return nil }
func (p probe) List(context.Context, string) ([]Holder, error) {
	p.note("List")
	return nil, nil
}

// restricted returns p offering the Store methods and exactly the optional
// capabilities in m.
func restricted(t *testing.T, p probe, m capSet) Store {
	t.Helper()
	var parts storeParts
	pv := reflect.ValueOf(&parts).Elem()
	pv.Field(0).Set(reflect.ValueOf(p))
	for i, c := range capabilityTypes() {
		if !reflect.TypeOf(p).Implements(c) {
			t.Fatalf("the test's probe lacks %s: add its methods", c.Name())
		}
		pv.Field(i + 1).Set(reflect.ValueOf(p))
	}
	s := wrappers[m](parts)
	if got := offered(s); got != m {
		t.Fatalf("wrappers[%b] offers %b", m, got)
	}
	return s
}

// offered returns the optional capabilities s implements, found by
// reflection, not by capabilitiesOf.
func offered(s Store) capSet {
	var m capSet
	for i, c := range capabilityTypes() {
		if reflect.TypeOf(s).Implements(c) {
			m |= 1 << i
		}
	}
	return m
}

// callAll calls every method of the interface c on s with zero arguments
// and returns the calls the probes noted.
func callAll(s Store, c reflect.Type, calls *[]string) []string {
	*calls = nil
	for i := 0; i < c.NumMethod(); i++ {
		m := reflect.ValueOf(s).MethodByName(c.Method(i).Name)
		var args []reflect.Value
		for j := 0; j < m.Type().NumIn(); j++ {
			args = append(args, reflect.Zero(m.Type().In(j)))
		}
		m.Call(args)
	}
	return slices.Clone(*calls)
}

// wantCalls returns "who.Method" for each method of c.
func wantCalls(who string, c reflect.Type) []string {
	var out []string
	for i := 0; i < c.NumMethod(); i++ {
		out = append(out, who+"."+c.Method(i).Name)
	}
	return out
}

// TestWrapStoreKeepsEachCapability checks, for each optional capability,
// that a wrapper of a store with it offers it and calls outer's methods
// when outer has them too and inner's otherwise, and that a wrapper of a
// store without it does not offer it even when outer has it.
func TestWrapStoreKeepsEachCapability(t *testing.T) {
	for i, c := range capabilityTypes() {
		t.Run(c.Name(), func(t *testing.T) {
			var calls []string
			in, out := probe{"inner", &calls}, probe{"outer", &calls}
			bit := capSet(1) << i
			only := restricted(t, in, bit)
			plainOuter := restricted(t, out, 0)

			w := WrapStore(only, plainOuter)
			if got := offered(w); got != bit {
				t.Fatalf("wrapping a store with only %s offers %b, want %b", c.Name(), got, bit)
			}
			if got, want := callAll(w, c, &calls), wantCalls("inner", c); !slices.Equal(got, want) {
				t.Errorf("outer without %s: calls %v, want %v", c.Name(), got, want)
			}
			if got, want := callAll(WrapStore(only, out), c, &calls), wantCalls("outer", c); !slices.Equal(got, want) {
				t.Errorf("outer with %s: calls %v, want %v", c.Name(), got, want)
			}
			if got := offered(WrapStore(restricted(t, in, 0), out)); got != 0 {
				t.Errorf("wrapping a plain store in an outer with every capability offers %b", got)
			}
		})
	}
}

// TestWrapStoreAllCombinations checks the iff property for every
// combination of the optional capabilities: the wrapper offers a capability
// if and only if the wrapped store does, whatever outer offers, and the
// Store methods are outer's.
func TestWrapStoreAllCombinations(t *testing.T) {
	n := len(capabilityTypes())
	if len(wrappers) != 1<<n {
		t.Fatalf("%d constructors for %d capabilities (run go generate)", len(wrappers), n)
	}
	storeType := reflect.TypeFor[Store]()
	for m := capSet(0); m < 1<<n; m++ {
		var calls []string
		in, out := probe{"inner", &calls}, probe{"outer", &calls}
		inner := restricted(t, in, m)
		if got := capabilitiesOf(inner); got != m {
			t.Fatalf("capabilitiesOf a store with %b says %b", m, got)
		}
		for _, outer := range []Store{out, restricted(t, out, 0), restricted(t, out, ^m&(1<<n-1))} {
			w := WrapStore(inner, outer)
			if got := offered(w); got != m {
				t.Errorf("wrapping a store with capabilities %0*b in %T offers %0*b", n, m, outer, n, got)
			}
			if got, want := callAll(w, storeType, &calls), wantCalls("outer", storeType); !slices.Equal(got, want) {
				t.Errorf("Store methods of a wrapper of %b: calls %v, want %v", m, got, want)
			}
		}
	}
}
