// Package deadline runs a call that may not honour its context's deadline: a store
// call on a connection that hangs (lib/pq does not interrupt one) is given up a grace
// after the deadline, and goes on in the background (docs/architecture.md, "Accepted
// means stored").
package deadline
