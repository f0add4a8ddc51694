package dedupe

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/fence"
)

func TestTableStatements(t *testing.T) {
	for _, tc := range []struct {
		name   string
		table  Table
		create string
		mark   string
	}{
		{
			"postgres defaults",
			Table{Name: "processed"},
			`CREATE TABLE IF NOT EXISTS "processed" ("id" VARCHAR(255) NOT NULL PRIMARY KEY, "done_at" BIGINT NOT NULL)`,
			`INSERT INTO "processed" ("id", "done_at") VALUES ($1, $2) ON CONFLICT ("id") DO NOTHING`,
		},
		{
			"sqlite custom columns",
			Table{Name: "inbox", ID: "msg", DoneAt: "at", Dialect: fence.SQLite},
			`CREATE TABLE IF NOT EXISTS "inbox" ("msg" VARCHAR(255) NOT NULL PRIMARY KEY, "at" BIGINT NOT NULL)`,
			`INSERT INTO "inbox" ("msg", "at") VALUES (?, ?) ON CONFLICT ("msg") DO NOTHING`,
		},
		{
			"mysql schema-qualified",
			Table{Name: "app.processed", Dialect: fence.MySQL},
			"CREATE TABLE IF NOT EXISTS `app`.`processed` (`id` VARBINARY(255) NOT NULL PRIMARY KEY, `done_at` BIGINT NOT NULL)",
			"INSERT IGNORE INTO `app`.`processed` (`id`, `done_at`) VALUES (?, ?)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			create, err := tc.table.CreateSQL()
			if err != nil || create != tc.create {
				t.Errorf("CreateSQL = %q, %v\nwant %q", create, err, tc.create)
			}
			mark, err := tc.table.markSQL()
			if err != nil || mark != tc.mark {
				t.Errorf("markSQL = %q, %v\nwant %q", mark, err, tc.mark)
			}
		})
	}
}

func TestTableInvalidNames(t *testing.T) {
	for _, tc := range []struct {
		table Table
		want  string
	}{
		{Table{}, "Table.Name is empty"},
		{Table{Name: "x; DROP TABLE y"}, "table"},
		{Table{Name: "a.b.c.d"}, "more than three"},
		{Table{Name: "t", ID: "a b"}, "id column"},
		{Table{Name: "t", DoneAt: `"x"`}, "done_at column"},
		{Table{Name: "t", ID: "x", DoneAt: "x"}, "both"},
		{Table{Name: "t", Dialect: fence.Dialect(9)}, "unknown SQL dialect"},
	} {
		_, err := tc.table.CreateSQL()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: CreateSQL error %v, want one naming %q", tc.table, err, tc.want)
		}
		if tc.want != "unknown SQL dialect" && !errors.Is(err, fence.ErrInvalidIdentifier) {
			t.Errorf("%+v: error %v does not match fence.ErrInvalidIdentifier", tc.table, err)
		}
	}
}
