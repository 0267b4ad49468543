package conversation

// Lease is a worker's hold on one thread: while it holds it, only that worker runs
// the thread's inputs, one at a time, in Seq order (docs/architecture.md, "Durable
// turns"). A lease is kept alive by Store.Renew and fences writes: Store.Save,
// Store.Begin, Store.Next, Store.Finish and Store.Release check Owner and Token.
type Lease struct {
	Key Key
	// Owner names the holding process (one per Service, unique per start).
	Owner string
	// Token is the fencing token: it increases every time the thread changes hands
	// after a lease expired. Zero means no lease (an unfenced write).
	Token int64
}

// Held reports whether l is a lease (not the zero Lease).
func (l Lease) Held() bool { return l.Token != 0 }

// LeaseState is a lease as Store.Renew reports it, with what other workers told its
// holder since it was acquired.
type LeaseState struct {
	Lease
	// Newest is the Seq of the newest input enqueued for the thread while the lease
	// was held (0: none): inputs wait behind the running turn.
	Newest int64
	// Message and MessageBy are the Seq and author (Slack user id) of the newest
	// person's message enqueued for the thread while the lease was held (0: none): it
	// stops a running turn of an older input.
	Message   int64
	MessageBy string
	// Stop is the newest stop request (Store.Signal) made while the lease was held;
	// its Target is "" when there was none.
	Stop StopRequest
}

// StopRequest asks the worker running a thread to stop the turn of one input (a Stop
// button clicked on another replica).
type StopRequest struct {
	// Target is the input id the button was drawn for, or a pipeline run's
	// "run:<id>".
	Target string
	// By is the Slack user id of the person who asked.
	By string
}
