package sessionpool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func ok(context.Context, *fake) error { return nil }

func TestUseSequential(t *testing.T) {
	tests := []struct {
		name      string
		setUp     func(context.Context, *fake) error
		run       func(t *testing.T, p *Pool[*fake]) error // the second step, after a first Use of class 1s
		wantErr   error
		wantMade  int
		wantRefs  int // of the first session
		wantInMap int
	}{
		{"reuse", ok, func(t *testing.T, p *Pool[*fake]) error {
			_, err := p.Use(context.Background(), time.Second)
			return err
		}, nil, 1, 2, 1},
		{"other class", ok, func(t *testing.T, p *Pool[*fake]) error {
			_, err := p.Use(context.Background(), 2*time.Second)
			return err
		}, nil, 2, 1, 2},
		{"gone replaced", ok, func(t *testing.T, p *Pool[*fake]) error {
			first := p.All()[0]
			first.mu.Lock()
			first.gone = true // lost, but not yet forgotten
			first.mu.Unlock()
			ss, err := p.Use(context.Background(), time.Second)
			if err == nil && ss == first {
				t.Error("Use returned the gone session")
			}
			return err
		}, nil, 2, 1, 1},
		{"stale forget", ok, func(t *testing.T, p *Pool[*fake]) error {
			p.Forget(time.Second, &fake{})
			return nil
		}, nil, 1, 1, 1},
		{"closed", ok, func(t *testing.T, p *Pool[*fake]) error {
			all, first := p.Close()
			if len(all) != 1 || !first {
				t.Errorf("Close = %d sessions, %v; want 1, true", len(all), first)
			}
			if all, first := p.Close(); all != nil || first {
				t.Errorf("second Close = %v, %v; want nil, false", all, first)
			}
			if p.WhileOpen(func() { t.Error("WhileOpen ran on a closed pool") }) {
				t.Error("WhileOpen reported running on a closed pool")
			}
			_, err := p.Use(context.Background(), time.Second)
			return err
		}, errClosed, 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var made atomic.Int32
			p := newPool(tt.setUp, &made)
			first, err := p.Use(context.Background(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.run(t, p); !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if n := int(made.Load()); n != tt.wantMade {
				t.Errorf("%d sessions made, want %d", n, tt.wantMade)
			}
			if n := first.refCount(); n != tt.wantRefs {
				t.Errorf("first session has %d references, want %d", n, tt.wantRefs)
			}
			if n := len(p.All()); n != tt.wantInMap {
				t.Errorf("%d sessions in the pool, want %d", n, tt.wantInMap)
			}
		})
	}
}
