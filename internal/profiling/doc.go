// Package profiling writes the CPU profile of a replica, or of the burst benchmark's
// floor (internal/burstfloor), that BenchmarkBurst starts with BURST_CPUPROFILE set
// (docs/operations.md, "Numbers").
package profiling
