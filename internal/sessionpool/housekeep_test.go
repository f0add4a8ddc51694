package sessionpool

import (
	"testing"
	"time"
)

func TestSweepPeriod(t *testing.T) {
	tests := []struct{ class, want time.Duration }{
		{100 * time.Millisecond, 50 * time.Millisecond},
		{time.Second, 125 * time.Millisecond},
		{4 * time.Second, 500 * time.Millisecond},
		{time.Minute, time.Second},
	}
	for _, tt := range tests {
		if got := SweepPeriod(tt.class); got != tt.want {
			t.Errorf("SweepPeriod(%s) = %s, want %s", tt.class, got, tt.want)
		}
	}
}

// TestHousekeepKicks runs rounds on kicks only (the period is an hour) and
// ends when a round reports done.
func TestHousekeepKicks(t *testing.T) {
	stop, kick := make(chan struct{}), make(chan struct{})
	rounds := make(chan int, 3)
	ended := make(chan struct{})
	n := 0
	go func() {
		defer close(ended)
		Housekeep(stop, kick, time.Hour, func() bool {
			n++
			rounds <- n
			return n == 3
		})
	}()
	for want := 1; want <= 3; want++ {
		kick <- struct{}{}
		if got := <-rounds; got != want {
			t.Fatalf("round %d ran as %d", want, got)
		}
	}
	<-ended // done after the third round: a fourth kick would block forever
	close(stop)
}

// TestHousekeepStops ends the loop with stop before any round.
func TestHousekeepStops(t *testing.T) {
	stop, kick := make(chan struct{}), make(chan struct{})
	ended := make(chan struct{})
	ran := false
	go func() {
		defer close(ended)
		Housekeep(stop, kick, time.Hour, func() bool { ran = true; return false })
	}()
	close(stop)
	<-ended
	if ran {
		t.Error("a round ran before stop, with no kick and an hour's period")
	}
}
