// Package zookeeper is a leasehold store on a ZooKeeper ensemble.
package zookeeper
