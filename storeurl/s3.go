//go:build !leasehold_no_s3

package storeurl

import "github.com/leasehold-go/leasehold/s3"

// s3Row is S3 conditional writes; the build tag leasehold_no_s3 leaves it
// out, with the AWS SDK (s3_leftout.go).
func s3Row() Kind {
	return Kind{
		Name: "s3", Title: "S3", Schemes: []string{"s3"},
		Package: "s3",
		URLs:    []string{"s3://bucket/prefix?endpoint=URL&region=R"},
		Usage: "s3://bucket[/prefix][?endpoint=URL&region=R&access_key=K&secret_key=S]\n" +
			"                        one object per key (credentials also from AWS_ACCESS_KEY_ID...); `leasehold migrate` creates the bucket",
		CheckURL: s3.CheckURL, Open: openWith(s3.OpenURL), Migrate: s3.MigrateURL,
		FaultBackends: []string{"s3"},
		Servers:       []string{"versitygw"},
		BuildTag:      "leasehold_no_s3",
		Token:         "max(counter + 1, the server's Date in µs), the counter in a never-deleted counter object raised under If-Match before the lease's conditional write",
		Notes:         "conditional writes (If-None-Match, If-Match); the server's clock (Last-Modified, Date) ends a lease; a server that ignores the conditions is refused at open",
	}
}
