package fence_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/leasehold-go/leasehold/fence"
)

// A MemoryGuard remembers the highest token admitted per resource.
func ExampleMemoryGuard() {
	ctx := context.Background()
	var guard fence.MemoryGuard

	fmt.Println(guard.Admit(ctx, "report.csv", 3))
	fmt.Println(guard.Admit(ctx, "report.csv", 5))
	err := guard.Admit(ctx, "report.csv", 4)
	fmt.Println(errors.Is(err, fence.ErrStale), err)
	// Output:
	// <nil>
	// <nil>
	// true fence: stale fencing token 4 for report.csv: a newer holder wrote with token 5
}
