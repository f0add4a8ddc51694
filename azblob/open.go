package azblob

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/leasehold-go/leasehold"
)

// Environment variables read by OpenURL for credentials, so that secrets
// need not appear in a URL.
const (
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	EnvKey              = "AZURE_STORAGE_KEY"
	EnvSAS              = "AZURE_STORAGE_SAS_TOKEN"
)

// OpenConnectionString opens a store on container name of the account a
// connection string names (Azurite's development account included).
func OpenConnectionString(connStr, name string) (*Store, error) {
	o, tr := options()
	cc, err := container.NewClientFromConnectionString(connStr, name, o)
	if err != nil {
		return nil, openErr(name, err)
	}
	return withTransport(New(cc), tr), nil
}

// OpenSharedKey opens a store on container name at the blob endpoint (say
// https://ACCOUNT.blob.core.windows.net) with an account's shared key.
func OpenSharedKey(endpoint, account, key, name string) (*Store, error) {
	o, tr := options()
	cred, err := container.NewSharedKeyCredential(account, key)
	if err != nil {
		return nil, openErr(name, err)
	}
	cc, err := container.NewClientWithSharedKeyCredential(containerURL(endpoint, name), cred, o)
	if err != nil {
		return nil, openErr(name, err)
	}
	return withTransport(New(cc), tr), nil
}

// OpenSAS opens a store on container name with a SAS token (the query
// string, with or without its leading "?"), account- or container-wide.
func OpenSAS(endpoint, sas, name string) (*Store, error) {
	o, tr := options()
	u := containerURL(endpoint, name) + "?" + strings.TrimPrefix(sas, "?")
	cc, err := container.NewClientWithNoCredential(u, o)
	if err != nil {
		return nil, openErr(name, err)
	}
	return withTransport(New(cc), tr), nil
}

// OpenDefaultCredential opens a store on container name with azidentity's
// default credential chain (environment, workload identity, managed
// identity, Azure CLI).
func OpenDefaultCredential(endpoint, name string) (*Store, error) {
	o, tr := options()
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, openErr(name, err)
	}
	cc, err := container.NewClient(containerURL(endpoint, name), cred, o)
	if err != nil {
		return nil, openErr(name, err)
	}
	return withTransport(New(cc), tr), nil
}

func containerURL(endpoint, name string) string {
	return strings.TrimSuffix(endpoint, "/") + "/" + url.PathEscape(name)
}

// openErr is a *leasehold.StoreError, as the other stores' open errors are.
func openErr(name string, err error) error {
	return &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("container %q: %w", name, err)}
}

// OpenURL opens a store from azblob://ACCOUNT/CONTAINER?endpoint=URL&auth=A.
// endpoint defaults to https://ACCOUNT.blob.core.windows.net (give
// Azurite's http://127.0.0.1:PORT/devstoreaccount1 to test). auth is one of
// connstr ($AZURE_STORAGE_CONNECTION_STRING), key ($AZURE_STORAGE_KEY, or
// the key= parameter), sas ($AZURE_STORAGE_SAS_TOKEN, or sas=) and default
// (azidentity's default credential); without auth the first of those
// whose variable is set is used, else default. The container must exist
// (Migrate, or `leasehold migrate`). ctx is not used to dial: the store
// opens no connection until its first call.
func OpenURL(ctx context.Context, raw string) (*Store, error) {
	_ = ctx
	c, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	switch c.auth {
	case "connstr":
		if os.Getenv(EnvConnectionString) == "" {
			return nil, openErr(c.container, errors.New("auth=connstr but $"+EnvConnectionString+" is empty or unset"))
		}
		return OpenConnectionString(os.Getenv(EnvConnectionString), c.container)
	case "key":
		return OpenSharedKey(c.endpoint, c.account, c.key, c.container)
	case "sas":
		return OpenSAS(c.endpoint, c.sas, c.container)
	}
	return OpenDefaultCredential(c.endpoint, c.container)
}

// CheckURL reports what is wrong with raw as OpenURL would, without
// contacting anything; nil when OpenURL can use it.
func CheckURL(raw string) error {
	_, err := parseURL(raw)
	return err
}

// urlConfig is what an azblob:// URL says.
type urlConfig struct {
	account, container, endpoint, key, sas, auth string
}

func parseURL(raw string) (urlConfig, error) {
	var c urlConfig
	u, err := url.Parse(raw)
	if err != nil {
		return c, fmt.Errorf("leasehold: %s store: bad URL: %w", Name, err)
	}
	c.account, c.container = u.Host, strings.Trim(u.Path, "/")
	if u.Scheme != Name || c.account == "" || c.container == "" || strings.Contains(c.container, "/") {
		return c, fmt.Errorf("leasehold: %s store: URL %q: want azblob://ACCOUNT/CONTAINER", Name, u.Redacted())
	}
	q := u.Query()
	c.endpoint = q.Get("endpoint")
	if c.endpoint == "" {
		c.endpoint = "https://" + c.account + ".blob.core.windows.net"
	}
	c.key, c.sas = firstOf(q.Get("key"), os.Getenv(EnvKey)), firstOf(q.Get("sas"), os.Getenv(EnvSAS))
	c.auth = q.Get("auth")
	if c.auth == "" {
		c.auth = pickAuth(c.key, c.sas)
	}
	switch c.auth {
	case "connstr", "key", "sas", "default":
		return c, nil
	}
	return c, errors.New("leasehold: azblob store: auth=" + c.auth + ": want connstr, key, sas or default")
}

func pickAuth(key, sas string) string {
	switch {
	case os.Getenv(EnvConnectionString) != "":
		return "connstr"
	case key != "":
		return "key"
	case sas != "":
		return "sas"
	}
	return "default"
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// maxIdlePerHost is how many idle connections to the blob endpoint the
// store's transport keeps: Go's default, 2, makes every request past the
// second in flight dial a connection and drop it after.
const maxIdlePerHost = 128

// options gives a client its own HTTP transport, which the store's Close
// closes the idle connections of, keeping up to maxIdlePerHost idle
// connections to the endpoint for the next requests.
func options() (*container.ClientOptions, *http.Transport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = maxIdlePerHost
	tr.MaxIdleConns = max(tr.MaxIdleConns, maxIdlePerHost)
	return &container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}}, tr
}

func withTransport(s *Store, tr *http.Transport) *Store {
	s.tr = tr
	return s
}
