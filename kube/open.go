package kube

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/leasehold-go/leasehold"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// InCluster is the host of a URL that uses the pod's service account.
const InCluster = "in-cluster"

// inClusterNamespace is where a pod's service account mount names its
// namespace.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// OpenURL opens a store from
//
//	kube:///[NAMESPACE][?kubeconfig=PATH&context=NAME]
//	kube://in-cluster/[NAMESPACE]
//
// The first form reads a kubeconfig: PATH, else the files $KUBECONFIG
// names, else ~/.kube/config; the context NAME, else the current one. Its
// user's token, token file, client certificate or exec plugin
// authenticate. The second uses the pod's service account (in-cluster
// configuration). NAMESPACE defaults to the context's namespace (the
// pod's, in-cluster); a URL that names none where none is set is refused.
// The namespace must exist (`kubectl create namespace`); OpenURL probes
// the server as New does.
func OpenURL(ctx context.Context, raw string) (*Store, error) {
	c, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	cfg, ns, err := c.restConfig()
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	return New(ctx, cfg, ns, nil)
}

// CheckURL reports what is wrong with raw as OpenURL would, without
// reading any file or contacting anything; nil when OpenURL can use it.
func CheckURL(raw string) error {
	_, err := parseURL(raw)
	return err
}

// urlConfig is what a kube:// URL says.
type urlConfig struct {
	inCluster            bool
	namespace            string
	kubeconfig, kcontext string
}

var urlParams = []string{"kubeconfig", "context"}

func parseURL(raw string) (urlConfig, error) {
	var c urlConfig
	bad := func(format string, a ...any) (urlConfig, error) {
		return c, fmt.Errorf("leasehold: %s store: URL: "+format, append([]any{Name}, a...)...)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("%v", err)
	}
	if u.Scheme != Name || u.User != nil || u.Opaque != "" || (u.Host != "" && u.Host != InCluster) {
		return bad("%q: want kube:///[NAMESPACE][?kubeconfig=PATH&context=NAME] or kube://in-cluster/[NAMESPACE]", u.Redacted())
	}
	c.inCluster = u.Host == InCluster
	c.namespace = strings.TrimPrefix(u.Path, "/")
	if c.namespace != "" {
		if errs := validation.IsDNS1123Label(c.namespace); len(errs) > 0 {
			return bad("namespace %q: %s", clip(c.namespace), strings.Join(errs, "; "))
		}
	}
	q := u.Query()
	for k, vs := range q {
		if !slices.Contains(urlParams, k) {
			return bad("unknown parameter %q (want %s)", k, strings.Join(urlParams, ", "))
		}
		if len(vs) > 1 {
			return bad("parameter %q given %d times", k, len(vs))
		}
	}
	c.kubeconfig, c.kcontext = q.Get("kubeconfig"), q.Get("context")
	if c.inCluster && (c.kubeconfig != "" || c.kcontext != "") {
		return bad("kube://in-cluster takes no kubeconfig or context")
	}
	return c, nil
}

// restConfig loads the client configuration and the namespace.
func (c urlConfig) restConfig() (*rest.Config, string, error) {
	if c.inCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", fmt.Errorf("in-cluster configuration: %w", err)
		}
		ns := c.namespace
		if ns == "" {
			b, err := os.ReadFile(inClusterNamespace)
			if err != nil {
				return nil, "", fmt.Errorf("the URL names no namespace and the pod's is unknown: %w", err)
			}
			ns = strings.TrimSpace(string(b))
		}
		return cfg, ns, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.kubeconfig != "" {
		rules.ExplicitPath = c.kubeconfig
	}
	kc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.kcontext})
	cfg, err := kc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns := c.namespace
	if ns == "" {
		raw, err := kc.RawConfig()
		if err != nil {
			return nil, "", fmt.Errorf("kubeconfig: %w", err)
		}
		name := c.kcontext
		if name == "" {
			name = raw.CurrentContext
		}
		if kctx, ok := raw.Contexts[name]; ok {
			ns = kctx.Namespace
		}
		if ns == "" {
			return nil, "", fmt.Errorf("the URL names no namespace and the kubeconfig's context %q sets none (kube:///NAMESPACE)", name)
		}
	}
	return cfg, ns, nil
}
