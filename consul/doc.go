// Package consul is a leasehold store on Consul's KV store and sessions.
package consul
