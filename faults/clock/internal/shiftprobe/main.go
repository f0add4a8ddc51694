// Command shiftprobe is the clock package's test program for BuildShifted:
// built with the patched time package, it prints the wall offset it runs
// with (clock.Observed), waits for a line on stdin (the test steps the
// offset meanwhile), then prints the new offset and the time elapsed since
// its first reading, by time.Since (the monotonic clock).
package main

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"github.com/leasehold-go/leasehold/faults/clock"
)

func main() {
	t0 := time.Now()
	fmt.Println(clock.Observed())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	now := time.Now() // both readings: Sub uses the monotonic ones
	fmt.Println(clock.Observed(), time.Since(t0), now.Sub(t0))
}
