package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
)

// DefaultRegion is the region of a URL that names none, when the
// environment and the shared configuration name none either.
const DefaultRegion = "us-east-1"

// migrateWait bounds MigrateURL's wait for a new table to become active.
const migrateWait = 5 * time.Minute

// OpenURL opens a store from
//
//	dynamodb://TABLE?endpoint=URL&region=R&access_key=K&secret_key=S&session_token=T&max_skew=D
//
// Every parameter is optional. endpoint is the server's URL (say
// http://127.0.0.1:4567 for dynalite); without it the SDK's AWS endpoint
// for the region is used. region defaults to the environment's
// (AWS_REGION) or the shared configuration's, else us-east-1. Credentials
// come from access_key and secret_key (with session_token) when given,
// else from the SDK's default chain: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, then the shared files
// (AWS_PROFILE), web identity, and the container or instance role.
// max_skew (a Go duration, say 500ms) selects bounded-skew expiry
// (Options.MaxSkew); without it expiry is clock-free. The table must exist
// (MigrateURL, or `leasehold migrate`). OpenURL checks it as New does.
func OpenURL(ctx context.Context, raw string) (*Store, error) {
	c, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	cl, tr, err := c.client(ctx)
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, cl, c.table, &Options{MaxSkew: c.skew})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	s.tr = tr
	return s, nil
}

// MigrateURL creates the table a URL names, if it does not exist (a
// partition key "key" of type S, billed per request), and waits until it
// is active. A table that exists is checked as New does.
func MigrateURL(ctx context.Context, raw string) error {
	c, err := parseURL(raw)
	if err != nil {
		return err
	}
	cl, tr, err := c.client(ctx)
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	_, err = cl.CreateTable(ctx, &awsddb.CreateTableInput{
		TableName:            &c.table,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(KeyAttribute), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(KeyAttribute), AttributeType: types.ScalarAttributeTypeS}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ctx.Err()
		}
		return &leasehold.StoreError{Store: Name, Op: "migrate", Err: fmt.Errorf("create table %s: %w", c.table, describe(err))}
	}
	w := awsddb.NewTableExistsWaiter(cl, func(o *awsddb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
	if err := w.Wait(ctx, &awsddb.DescribeTableInput{TableName: &c.table}, migrateWait); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ctx.Err()
		}
		return &leasehold.StoreError{Store: Name, Op: "migrate", Err: fmt.Errorf("table %s: waiting for it to become active: %w", c.table, describe(err))}
	}
	s, err := New(ctx, cl, c.table, nil)
	if err != nil {
		return err
	}
	return s.Close()
}

// CheckURL reports what is wrong with raw as OpenURL would, without
// contacting anything; nil when OpenURL can use it.
func CheckURL(raw string) error {
	_, err := parseURL(raw)
	return err
}

// client builds the DynamoDB client a URL says, on an HTTP transport of
// its own (which the store's Close closes): a copy of the SDK's, which the
// shared configuration may have given a CA bundle (AWS_CA_BUNDLE).
func (c urlConfig) client(ctx context.Context) (*awsddb.Client, *http.Transport, error) {
	var opts []func(*config.LoadOptions) error
	if c.region != "" {
		opts = append(opts, config.WithRegion(c.region))
	}
	if c.access != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.access, c.secret, c.session)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("table %s: the AWS configuration: %w", c.table, err)}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		tr = bc.GetTransport()
	}
	cfg.HTTPClient = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	cl := awsddb.NewFromConfig(cfg, func(o *awsddb.Options) {
		if c.endpoint != "" {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
	})
	return cl, tr, nil
}
