package sessionpool

import "time"

// SweepPeriod returns how often the housekeeping of a session of class
// looks for expired grants: an eighth of the class, within 50 ms and 1 s.
func SweepPeriod(class time.Duration) time.Duration {
	return min(max(class/8, 50*time.Millisecond), time.Second)
}

// Housekeep is a session's housekeeping loop: it calls round a period
// after the last round, or sooner when kick receives, until stop closes or
// round reports that the session is done.
func Housekeep(stop, kick <-chan struct{}, period time.Duration, round func() (done bool)) {
	t := time.NewTimer(period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-kick:
		case <-stop:
			return
		}
		if round() {
			return
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(period)
	}
}
