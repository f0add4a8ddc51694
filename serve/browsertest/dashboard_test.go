package browsertest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/remote"
	"github.com/leasehold-go/leasehold/serve"
	"github.com/leasehold-go/leasehold/sqlite"
)

const (
	adminToken = "admin-token-0123456789abcdef"
	readToken  = "read-token-0123456789abcdef"
	appToken   = "app-token-0123456789abcdef"
)

// startServer serves a new sqlite store on loopback with three tokens:
// admin (everything), reader (every verb but admin on jobs/) and app (the
// client's: acquire, renew, release on jobs/). It returns the server's URL,
// a client store with the app's token, and the file of the server's log.
func startServer(t *testing.T) (string, leasehold.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "leases.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	path := filepath.Join(dir, "tokens")
	text := "admin " + adminToken + " * *\nreader " + readToken + " acquire,renew,release,read,watch jobs/\n" +
		"app " + appToken + " acquire,renew,release,read jobs/\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := serve.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "serve.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	srv := serve.New(st, &serve.Options{Tokens: tokens, Logger: slog.New(slog.NewTextHandler(log, nil))})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); _ = srv.Close() })
	client, err := remote.Open(context.Background(), hs.URL, &remote.Options{Token: appToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return hs.URL, client, logPath
}

// browser starts headless Chromium (Debian's chromium, installed by
// scripts/install/chromium.sh); a missing one fails the test. The flags
// work as root in a container.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("no chromium on PATH (install it with scripts/install/chromium.sh): %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 520),
	}
	// A bound on the whole run, so that a hung browser fails the test
	// rather than the suite's timeout; no step's speed is asserted.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(bcancel)
	return bctx
}

// artifacts returns the folder for the test's artefacts:
// $LEASEHOLD_ARTIFACTS if set, else a temporary one.
func artifacts(t *testing.T) string {
	if dir := os.Getenv("LEASEHOLD_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// row is the CSS selector of key's row in the dashboard's table.
func row(key string) chromedp.CSS {
	return chromedp.CSS(`#leases tr[data-key="` + key + `"]`)
}

// step runs browser actions, failing the test with what was being done.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// text returns the text of the element sel.
func text(t *testing.T, ctx context.Context, sel chromedp.CSS) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("the text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// count returns how many elements match the CSS selector sel.
func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
	if err != nil {
		t.Fatalf("counting %s: %v", sel, err)
	}
	return n
}

// signIn loads the dashboard and signs in with token, as a person would.
func signIn(t *testing.T, ctx context.Context, url, token string) {
	t.Helper()
	step(t, ctx, "load the sign-in page",
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), token),
		chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`#leases`)),
	)
	for _, sel := range []chromedp.CSS{`#live.live`} {
		step(t, ctx, "wait for the live stream", chromedp.WaitVisible(sel))
	}
}

func acquire(t *testing.T, client leasehold.Store, key, label string) leasehold.Grant {
	t.Helper()
	g, err := client.Acquire(context.Background(), leasehold.AcquireRequest{Key: key, Owner: "owner--owner-0123456789" + key + "-0123456789abcdef", Label: label, TTL: 90 * time.Second})
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return g
}

// waitFor holds an acquire of key open at the server (wait_ms) until ctx
// ends, as a client queued behind the holder.
func waitFor(ctx context.Context, url, key string) {
	body := `{"key":"` + key + `","owner":"waiting-owner-0123456789","ttl_ms":60000,"wait_ms":30000}`
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/acquire", strings.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+appToken)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// TestDashboardInChromium: a person's view of the dashboard. A reader
// sees a lease a client acquires appear with its token and disappear on
// its release, and has no break button; an admin has one, and it breaks
// the lease: the holder's renewal is then refused, and the break is in
// the audit log. A screenshot is kept with the test's artefacts.
func TestDashboardInChromium(t *testing.T) {
	url, client, logPath := startServer(t)
	ctx := browser(t)

	signIn(t, ctx, url, readToken)
	g := acquire(t, client, "jobs/nightly-backup", "batch-7:4242")
	step(t, ctx, "the acquired lease appears", chromedp.WaitVisible(row(g.Key)))
	if tok := text(t, ctx, row(g.Key)+" td.token"); tok != strconv.FormatUint(g.Token, 10) {
		t.Errorf("the row shows token %q, want %d", tok, g.Token)
	}
	if label := text(t, ctx, row(g.Key)+" td.label"); label != "batch-7:4242" {
		t.Errorf("the row shows holder %q", label)
	}
	if n := count(t, ctx, "button.break"); n != 0 {
		t.Errorf("a read-only viewer has %d break buttons", n)
	}
	if err := client.Release(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "the released lease disappears", chromedp.WaitNotPresent(row(g.Key)))

	step(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`form[action="/dashboard/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	g = acquire(t, client, "jobs/nightly-backup", "batch-7:4242")
	acquire(t, client, "jobs/report-hourly", "report-2:977")
	if _, err := client.Acquire(context.Background(), leasehold.AcquireRequest{Key: "jobs/report-hourly", Owner: "another-owner-0123456789", TTL: time.Minute}); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("a second acquire of a held key: %v, want held", err)
	}
	wctx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	go waitFor(wctx, url, "jobs/report-hourly")
	signIn(t, ctx, url, adminToken)
	step(t, ctx, "the admin sees the lease with a break button", chromedp.WaitVisible(row(g.Key)+" button.break"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#leases tr[data-key="jobs/report-hourly"] td.waiters')?.textContent === "1"`, chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatalf("the waiter shows: %v", err)
	}
	if c := text(t, ctx, row("jobs/report-hourly")+" td.contention"); c != "1" {
		t.Errorf("contention of jobs/report-hourly: %q, want 1", c)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(artifacts(t), "serve-dashboard.png")
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", png)

	step(t, ctx, "break the lease", chromedp.Click(row(g.Key)+" button.break"), chromedp.WaitNotPresent(row(g.Key)))
	if status := text(t, ctx, `#status`); !strings.Contains(status, "broke jobs/nightly-backup") {
		t.Errorf("the status line says %q after the break", status)
	}
	if _, err := client.Renew(context.Background(), g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("the broken lease's renewal: %v, want ErrNotHeld", err)
	}
	if log, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(log), "by=admin key=jobs/nightly-backup token="+strconv.FormatUint(g.Token, 10)) {
		t.Errorf("the audit log lacks the break: %q (%v)", log, err)
	}
}
