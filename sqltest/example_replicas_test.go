package sqltest_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite"

	"github.com/leasehold-go/leasehold/fence"
)

// A service with several replicas: each replica's fence.Middleware guards
// only its own process, so the decision that counts is made in the shared
// database, by fence.Table.Check in the handler's transaction. Replica A
// admits token 5 and stalls before its write; meanwhile replica B, which
// has never seen token 5, admits token 6 and writes. When A wakes up, its
// middleware has nothing against token 5, but the database refuses it.
func Example_replicas() {
	dir, _ := os.MkdirTemp("", "fence-example-")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "docs.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	db.Exec(`CREATE TABLE docs (id TEXT PRIMARY KEY, body TEXT NOT NULL DEFAULT '', fence BIGINT NOT NULL DEFAULT 0)`)
	db.Exec(`INSERT INTO docs (id) VALUES ('readme')`)
	docs := fence.Table{Name: "docs", Dialect: fence.SQLite}

	// write is every replica's handler: the fence check and the write in
	// one transaction, with the token the middleware put in the context.
	write := func(stall func()) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			stall() // a GC pause, a slow disk: anything between admission and write
			ctx := r.Context()
			token, _ := fence.TokenFrom(ctx)
			body, _ := io.ReadAll(r.Body)
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				http.Error(w, "database unavailable", http.StatusServiceUnavailable)
				return
			}
			defer tx.Rollback()
			if err := docs.Check(ctx, tx, r.PathValue("id"), token); err != nil {
				http.Error(w, err.Error(), fence.StatusCode(err))
				return
			}
			if _, err := tx.ExecContext(ctx, `UPDATE docs SET body = ? WHERE id = ?`, string(body), r.PathValue("id")); err != nil {
				http.Error(w, "write failed", http.StatusInternalServerError)
				return
			}
			if err := tx.Commit(); err != nil {
				http.Error(w, "commit failed", http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
	}
	replica := func(stall func()) *httptest.Server {
		var guard fence.MemoryGuard // this replica's own memory
		mux := http.NewServeMux()
		mux.Handle("PUT /docs/{id}", fence.Middleware(&guard, write(stall)))
		return httptest.NewServer(mux)
	}
	admitted, resume := make(chan struct{}), make(chan struct{})
	a := replica(func() { close(admitted); <-resume })
	defer a.Close()
	b := replica(func() {})
	defer b.Close()

	client := &http.Client{Transport: &fence.RoundTripper{}}
	defer client.CloseIdleConnections()
	put := func(server *httptest.Server, token uint64, body string) string {
		ctx := fence.WithToken(context.Background(), token) // e.g. the lease's context
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, server.URL+"/docs/readme", strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		return strings.TrimSpace(fmt.Sprint(resp.StatusCode, " ", string(msg)))
	}

	staleReply := make(chan string)
	go func() { staleReply <- put(a, 5, "from the holder of token 5") }()
	<-admitted // replica A admitted token 5 and stalls
	fmt.Println("B, token 6:", put(b, 6, "from the holder of token 6"))
	close(resume)
	fmt.Println("A, token 5:", <-staleReply)

	var body string
	db.QueryRow(`SELECT body FROM docs WHERE id = 'readme'`).Scan(&body)
	fmt.Println("stored:", body)
	// Output:
	// B, token 6: 204
	// A, token 5: 409 fence: stale fencing token 5 for docs id=readme: a newer holder wrote with token 6
	// stored: from the holder of token 6
}
