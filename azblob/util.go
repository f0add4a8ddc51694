package azblob

import (
	"io"
	"time"
)

var ioEOF = io.EOF

func ptr[T any](v T) *T { return &v }

func durationSecs(s int32) time.Duration { return time.Duration(s) * time.Second }

// nopCloser is an empty blob body.
type nopCloser struct{}

func (nopCloser) Read([]byte) (int, error)       { return 0, ioEOF }
func (nopCloser) Seek(int64, int) (int64, error) { return 0, nil }
func (nopCloser) Close() error                   { return nil }
