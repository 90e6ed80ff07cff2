//go:build !linux

package duckdb

func releaseMemory() {}
