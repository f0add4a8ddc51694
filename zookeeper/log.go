package zookeeper

import (
	"context"
	"fmt"
	"log/slog"
)

// logger routes the ZooKeeper client's log lines into slog, at debug level,
// with driver=zookeeper.
type logger struct{ l *slog.Logger }

func (l logger) Printf(format string, args ...any) {
	if l.l.Enabled(context.Background(), slog.LevelDebug) {
		l.l.Debug(fmt.Sprintf(format, args...), "driver", "zookeeper")
	}
}
