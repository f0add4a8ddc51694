package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedIsCurrent fails when wrap_gen.go is not what the generator
// writes for the store contract as it is now (run go generate).
func TestGeneratedIsCurrent(t *testing.T) {
	caps, err := capabilities("../../" + src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(caps)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../" + dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate in the repository root", dst)
	}
}
