// Package webhook delivers the webhook events of workflow runs (docs/api.md, "Webhooks")
// from the store's outbox to the configured URLs (WEBHOOK_URLS), signed as Slack signs
// its requests.
//
// conversation writes the events in the transaction of the checkpoint that produced
// them (conversation.Turn.Events), so a crash neither loses nor invents one. Each
// receiver (a URL with its own secret) has its own delivery of every event. For each
// receiver, a Deliverer claims due deliveries with a lease (Outbox.ClaimEvents;
// replicas never send one event to one URL at the same time), POSTs each with a
// bounded timeout, and records the outcome: done, or failed with its error and due
// again for that receiver after an exponential backoff (cenkalti/backoff), capped; a
// delivery still failing MaxAge after the event happened is abandoned. A thread's
// events reach each receiver one at a time, in order: its next event waits until the
// receiver's delivery of the one before has ended. A failing receiver holds back only
// itself. An event ends once every receiver is done with it (Outbox.CloseEvents).
// Delivery is at least once; the event's id stays the same across retries, for
// receivers to deduplicate on.
//
// Sign and Verify implement the signature: X-Threadwright-Signature is
// "v0=" + hex(HMAC-SHA256(secret, "v0:" + X-Threadwright-Request-Timestamp + ":" + body)).
package webhook
