package fence_test

import (
	"fmt"

	"github.com/leasehold-go/leasehold/fence"
)

// A Register stands in for a fenced resource in tests: it accepts only
// writes whose token is at least the highest seen, and keeps score.
func ExampleRegister() {
	var reg fence.Register[string]

	fmt.Println(reg.Write(1, "first holder"))
	fmt.Println(reg.Write(2, "second holder"))
	fmt.Println(reg.Write(1, "first holder, back from a long GC pause"))

	value, token, _ := reg.Read()
	accepted, rejected := reg.Counts()
	fmt.Printf("%q (token %d); accepted %d, rejected %d\n", value, token, accepted, rejected)
	// Output:
	// <nil>
	// <nil>
	// fence: stale fencing token 1 for register: a newer holder wrote with token 2
	// "second holder" (token 2); accepted 2, rejected 1
}
