//go:build linux

package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// watch is the Store's one inotify instance, watching the wake directory.
// A release in any process opens its key's bucket file for writing and
// closes it (announce), which the kernel reports to every watch on the
// directory as IN_CLOSE_WRITE with the file's name; the watch wakes that
// bucket's subscribers. Its goroutine blocks in the runtime's poller (the
// descriptor is non-blocking) and ends when stop closes the file.
type watch struct {
	w    *waker
	f    *os.File
	done chan struct{}
}

// watchMask: bucket files written, and the directory itself going away.
const watchMask = unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// startWatch creates the wake directory if needed and watches it. The
// watch reports every event after startWatch returns.
func startWatch(w *waker) (*watch, error) {
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return nil, err
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err // the inotify limits (fs.inotify.max_user_instances)
	}
	if _, err := unix.InotifyAddWatch(fd, w.dir, watchMask); err != nil {
		unix.Close(fd)
		return nil, err
	}
	wt := &watch{w: w, f: os.NewFile(uintptr(fd), w.dir), done: make(chan struct{})}
	go wt.run()
	return wt, nil
}

// run reads events until stop closes the file, or the watch breaks (then
// the waker learns it is lost).
func (wt *watch) run() {
	defer close(wt.done)
	// Room for 64 events with the longest name; a bucket event takes 32
	// bytes.
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := wt.f.Read(buf)
		if errors.Is(err, os.ErrClosed) {
			return // stop
		}
		if err != nil || !wt.dispatch(buf[:n]) {
			wt.f.Close()
			wt.w.lost(wt)
			return
		}
	}
}

// dispatch wakes the subscribers that the events in buf concern. It reports
// false when the watch is gone (the directory was removed or moved).
func (wt *watch) dispatch(buf []byte) bool {
	ne := binary.NativeEndian
	for len(buf) >= unix.SizeofInotifyEvent {
		mask := ne.Uint32(buf[4:8])
		end := unix.SizeofInotifyEvent + int(ne.Uint32(buf[12:16]))
		if end > len(buf) {
			return true // the kernel writes whole events; never reached
		}
		name := buf[unix.SizeofInotifyEvent:end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		buf = buf[end:]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			wt.w.signalAll() // events were dropped
		case mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
			return false
		default:
			if b, ok := parseBucket(string(name)); ok {
				wt.w.signal(b)
			}
		}
	}
	return true
}

// stop closes the inotify instance and waits for the goroutine.
func (wt *watch) stop() {
	wt.f.Close()
	<-wt.done
}

// announce touches bucket b's file in dir: open for writing (creating it and
// the directory if missing) and close, which inotify reports as
// IN_CLOSE_WRITE. Nothing is written; the file stays empty. A failure only
// loses a hint, so it is ignored.
func announce(dir string, b int) {
	path := dir + "/" + bucketName(b)
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOFOLLOW
	fd, err := unix.Open(path, flags, 0o600)
	if err == unix.ENOENT && os.MkdirAll(dir, 0o700) == nil {
		fd, err = unix.Open(path, flags, 0o600)
	}
	if err == nil {
		unix.Close(fd)
	}
}
