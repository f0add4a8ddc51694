package core

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"strings"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// Script is a Lua script and its SHA-1, the name Redis caches it under.
type Script struct {
	Name string
	Src  string
	SHA  string
}

func load(name string) *Script {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("leasehold/redis: missing embedded script " + name) // a build defect, caught by every test
	}
	sum := sha1.Sum(b)
	return &Script{Name: name, Src: string(b), SHA: hex.EncodeToString(sum[:])}
}

// The scripts, parsed once per process.
var (
	AcquireScript   = load("acquire")
	RenewScript     = load("renew")
	RenewManyScript = load("renew_many")
	ReleaseScript   = load("release")
	HolderScript    = load("holder")
)

// Scripts lists every script, for preloading.
var Scripts = []*Script{AcquireScript, RenewScript, RenewManyScript, ReleaseScript, HolderScript}

// Scripter runs Lua scripts on a Redis server. Replies come back as generic
// values: int64, string, []any and nil; a Redis error reply is an error whose
// text starts with the Redis error code ("NOSCRIPT ...", "READONLY ...").
type Scripter interface {
	EvalSha(ctx context.Context, sha string, keys, args []string) (any, error)
	Eval(ctx context.Context, script string, keys, args []string) (any, error)
}

// Run calls s by its SHA and, when the server does not have it cached
// (first use, restart, SCRIPT FLUSH, a new cluster node), sends the source
// with EVAL, which also caches it.
func Run(ctx context.Context, c Scripter, s *Script, keys, args []string) (any, error) {
	r, err := c.EvalSha(ctx, s.SHA, keys, args)
	if err != nil && IsNoScript(err) {
		r, err = c.Eval(ctx, s.Src, keys, args)
	}
	return r, err
}

// IsNoScript reports whether err is Redis's NOSCRIPT error reply.
func IsNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
