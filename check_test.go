package leasehold

import (
	"errors"
	"testing"
	"time"
)

func TestChecks(t *testing.T) {
	info := Info{Name: "t", MinTTL: time.Second}
	good := Grant{Key: "k", Owner: "o", Token: 1, TTL: time.Minute}
	with := func(f func(*Grant)) Grant { g := good; f(&g); return g }
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"acquire ok", CheckAcquire(AcquireRequest{Key: "k", Owner: "o", TTL: time.Minute}, info), nil},
		{"acquire bad key", CheckAcquire(AcquireRequest{Key: "a\x00", Owner: "o", TTL: time.Minute}, info), ErrInvalidKey},
		{"acquire zero TTL", CheckAcquire(AcquireRequest{Key: "k", Owner: "o"}, info), ErrInvalidTTL},
		{"acquire below MinTTL", CheckAcquire(AcquireRequest{Key: "k", Owner: "o", TTL: time.Millisecond}, info), ErrInvalidTTL},
		{"acquire no owner", CheckAcquire(AcquireRequest{Key: "k", TTL: time.Minute}, info), ErrInvalidKey},
		{"renew ok", CheckRenew(good, info), nil},
		{"renew zero TTL", CheckRenew(with(func(g *Grant) { g.TTL = 0 }), info), ErrInvalidTTL},
		{"renew zero token", CheckRenew(with(func(g *Grant) { g.Token = 0 }), info), ErrNotHeld},
		{"renew no owner", CheckRenew(with(func(g *Grant) { g.Owner = "" }), info), ErrNotHeld},
		{"renew bad key", CheckRenew(with(func(g *Grant) { g.Key = "" }), info), ErrInvalidKey},
		{"release ok", CheckRelease(good), nil},
		{"release zero token", CheckRelease(with(func(g *Grant) { g.Token = 0 })), ErrNotHeld},
		{"release no owner", CheckRelease(with(func(g *Grant) { g.Owner = "" })), ErrNotHeld},
		{"release bad key", CheckRelease(with(func(g *Grant) { g.Key = "a\nb" })), ErrInvalidKey},
		{"holder ok", CheckHolder("k"), nil},
		{"holder bad key", CheckHolder(""), ErrInvalidKey},
	}
	for _, tt := range tests {
		if tt.want == nil && tt.err != nil || tt.want != nil && !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.err, tt.want)
		}
	}
}
