package storetest

import (
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// Run runs the conformance suite against the stores open returns, one subtest per case
// (t.Run("ErrConflict", …)). The subtests run in parallel; each calls open once and must
// get a new, empty store that open closes in t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) conversation.Store) {
	suite[conversation.Store]{
		{"CreateLoad", testCreateLoad},
		{"ErrNotFound", testNotFound},
		{"Exists", testExists},
		{"AppendSeq", testAppendSeq},
		{"RecentWindow", testRecentWindow},
		{"ErrConflict", testConflict},
		{"ConcurrentSaves", testConcurrentSaves},
		{"ConcurrentCreates", testConcurrentCreates},
		{"InvalidTurn", testInvalidTurn},
		{"EnqueueDedup", testEnqueueDedup},
		{"ConcurrentEnqueue", testConcurrentEnqueue},
		{"EnqueueBatch", testEnqueueBatch},
		{"EnqueueBatchAtomic", testEnqueueBatchAtomic},
		{"EnqueueBatchSignals", testEnqueueBatchSignals},
		{"ConcurrentEnqueueBatch", testConcurrentEnqueueBatch},
		{"ConcurrentWorkers", testConcurrentWorkers},
		{"BeginSkipsFinished", testBeginSkipsFinished},
		{"Finish", testFinish},
		{"InputOrder", testInputOrder},
		{"InputPayloads", testInputPayloads},
		{"SaveMarksInputDone", testSaveMarksInputDone},
		{"PendingAndMerged", testPendingAndMerged},
		{"ConflictKeepsInputPending", testConflictKeepsInputPending},
		{"SaveAnsweredInput", testSaveAnsweredInput},
		{"SaveEnqueues", testSaveEnqueues},
		{"Workflows", testWorkflows},
		{"WorkflowsLimit", testWorkflowsLimit},
		{"DeleteIdle", testDeleteIdle},
		{"LargeText", testLargeText},
		{"Unicode", testUnicode},
		{"Ping", testPing},
		{"Acquire", testAcquire},
		{"ConcurrentAcquire", testConcurrentAcquire},
		{"BeginOrder", testBeginOrder},
		{"LeaseLost", testLeaseLost},
		{"Release", testRelease},
		{"Next", testNext},
		{"NextAgain", testNextAgain},
		{"SaveRelease", testSaveRelease},
		{"AcquireBegin", testAcquireBegin},
		{"AcquireBeginAgain", testAcquireBeginAgain},
		{"FinishLease", testFinishLease},
		{"Abandon", testAbandon},
		{"Renew", testRenew},
		{"RenewTakenOver", testRenewTakenOver},
		{"SignalClear", testSignalClear},
		{"Orphans", testOrphans},
		{"ExistsPending", testExistsPending},
		{"DeleteIdleLeases", testDeleteIdleLeases},
		{"StorableText", testStorableText},
		{"CountPending", testCountPending},
		{"Enqueued", testEnqueued},
		{"Amend", testAmend},
		{"Rewrite", testRewrite},
	}.run(t, open)
}

// Opened returns s, which an Open function returned with err, and closes it when the
// test ends. It fails tb at once when err is not nil, and later when Close fails: it
// is for a store, or another connection (an *sql.DB), that a test opens.
func Opened[S interface{ Close() error }](tb testing.TB, s S, err error) S {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}
