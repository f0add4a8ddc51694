package kube

import (
	"context"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// neededVerbs are the verbs on Leases the store uses.
var neededVerbs = []string{"get", "list", "watch", "create", "update", "patch"}

// selfUser returns the name the server knows the credentials by
// (SelfSubjectReview, which every authenticated user may make).
func selfUser(ctx context.Context, c authnclient.AuthenticationV1Interface) (string, error) {
	r, err := c.SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// dryRunCreate creates a Lease in the namespace without storing it: it
// fails when the credentials are refused, create is denied, or the
// namespace does not exist.
func (s *Store) dryRunCreate(ctx context.Context) error {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{GenerateName: "leasehold-probe-"}}
	_, err := s.leases.Create(ctx, l, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// deniedVerbs returns the verbs of neededVerbs on Leases in ns that the
// server's authorizer denies the store's user (SelfSubjectAccessReview).
func deniedVerbs(ctx context.Context, c authzclient.AuthorizationV1Interface, ns string) ([]string, error) {
	var denied []string
	for _, verb := range neededVerbs {
		r, err := c.SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Group: "coordination.k8s.io", Resource: "leases",
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		if !r.Status.Allowed {
			denied = append(denied, verb)
		}
	}
	return denied, nil
}
