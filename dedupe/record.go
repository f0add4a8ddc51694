package dedupe

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Record remembers which work items are done. Implementations are safe for
// concurrent use.
type Record interface {
	// Seen reports whether id has been marked done.
	Seen(ctx context.Context, id string) (bool, error)
	// Mark records id as done. It reports first == false when id was
	// already marked: that is not an error, and nothing changes.
	Mark(ctx context.Context, id string) (first bool, err error)
}

// MaxIDLen is the longest id, in bytes. It fits a VARCHAR(255) primary key
// in every supported database.
const MaxIDLen = 255

// Sentinel errors; check them with errors.Is.
var (
	// ErrInvalidID: an item id is empty, longer than MaxIDLen, not valid
	// UTF-8, or holds a control character (the characters lease keys
	// refuse), or the Consumer's prefix and the id do not make a valid
	// lease key.
	ErrInvalidID = errors.New("dedupe: invalid item id")
	// ErrUnmarked: the work ran and succeeded, but marking it done failed,
	// so a redelivery would run it again. The error also wraps the
	// record's failure.
	ErrUnmarked = errors.New("dedupe: work done but not marked done")
	// ErrDuplicate: returned by a Consumer's work function, it says that the
	// work found the item already done (for example [Table.Mark] in the
	// work's own transaction reported first == false, and the work rolled
	// back); Handle then reports Duplicate with a nil error.
	ErrDuplicate = errors.New("dedupe: item already done")
)

// ValidateID reports whether id is acceptable to every Record. The error
// wraps ErrInvalidID and names the problem.
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: id is empty", ErrInvalidID)
	case len(id) > MaxIDLen:
		return fmt.Errorf("%w: id is %d bytes, longer than %d", ErrInvalidID, len(id), MaxIDLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: id %q is not valid UTF-8", ErrInvalidID, id)
	}
	for i, r := range id {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: id %q holds control character %#x at offset %d", ErrInvalidID, id, r, i)
		}
	}
	return nil
}
