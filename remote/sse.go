package remote

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// errLongLine refuses an event-stream line over maxEventLine bytes.
var errLongLine = errors.New("an event-stream line is longer than 4096 bytes")

// eventReader reads a server-sent event stream. Lines end with CRLF, LF or
// a lone CR, as the format says (the server sends LF; a proxy or another
// server may not); a CR at the end of one read and the LF that starts the
// next are one line end.
type eventReader struct {
	r       *bufio.Reader
	afterCR bool // the last line ended with CR: an LF next ends nothing
}

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{r: bufio.NewReaderSize(r, maxEventLine)}
}

// line reads the next line, without its end; one of more than
// maxEventLine bytes is refused.
func (e *eventReader) line() (string, error) {
	var b strings.Builder
	for {
		c, err := e.r.ReadByte()
		if err != nil {
			return "", err
		}
		if e.afterCR {
			e.afterCR = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\r':
			e.afterCR = true
			return b.String(), nil
		case '\n':
			return b.String(), nil
		}
		if b.Len() >= maxEventLine {
			return "", errLongLine
		}
		b.WriteByte(c)
	}
}

// next reads the next event and returns its name ("message" when it has
// none). Comments and events without fields are skipped; data is read and
// ignored.
func (e *eventReader) next() (string, error) {
	name, fields := "", 0
	for {
		text, err := e.line()
		if err != nil {
			return "", err
		}
		switch {
		case text == "" && fields > 0:
			if name == "" {
				name = "message"
			}
			return name, nil
		case text == "", strings.HasPrefix(text, ":"):
		default:
			fields++
			if v, ok := strings.CutPrefix(text, "event:"); ok {
				name = strings.TrimPrefix(v, " ")
			}
		}
	}
}
