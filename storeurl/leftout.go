package storeurl

import (
	"errors"
	"fmt"
)

// ErrLeftOut: the URL names a store that this binary was built without
// (go build -tags leasehold_no_<store>; see docs/build-tags.md). Open and
// Migrate report it before contacting anything; the error also matches
// ErrUnknownScheme, since the binary cannot open the scheme.
var ErrLeftOut = errors.New("storeurl: this binary was built without the store")

// leftOut is the row of a store that a build tag left out of this binary:
// its name and schemes, so that its URLs are told from unknown ones.
func leftOut(name, title, tag string, schemes ...string) Kind {
	return Kind{
		Name: name, Title: title, Schemes: schemes, BuildTag: tag, LeftOut: true,
		Usage: fmt.Sprintf("%-23s (not in this binary: built with -tags %s)", schemes[0]+"://...", tag),
	}
}

// leftOutError is the error for a URL of the left-out store k.
func leftOutError(k Kind, scheme string) error {
	return &leftOutErr{name: k.Name, tag: k.BuildTag, scheme: scheme}
}

// leftOutErr matches ErrLeftOut and ErrUnknownScheme.
type leftOutErr struct{ name, tag, scheme string }

func (e *leftOutErr) Error() string {
	return fmt.Sprintf("storeurl: this binary was built without %s (go build -tags %s): it cannot open %s:// URLs; build it without that tag; %s",
		e.name, e.tag, e.scheme, supported())
}

// Is reports whether target is ErrLeftOut or ErrUnknownScheme.
func (e *leftOutErr) Is(target error) bool { return target == ErrLeftOut || target == ErrUnknownScheme }
