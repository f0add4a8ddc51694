// Package postgres is a leasehold store on PostgreSQL (placeholder doc).
package postgres
