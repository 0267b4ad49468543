// Package webhook delivers the webhook events of workflow runs (docs/api.md, "Webhooks")
// from the store's outbox to the configured URLs (WEBHOOK_URLS), signed as Slack signs
// its requests.
//
// conversation writes the events in the transaction of the checkpoint that produced
// them (conversation.Turn.Events), so a crash neither loses nor invents one. A
// Deliverer claims due events with a lease (Outbox.ClaimEvents; replicas never send
// one event at the same time), POSTs each to every URL with a bounded timeout, and
// records the outcome: done, or failed with its error and due again after an
// exponential backoff (cenkalti/backoff), capped; an event still failing MaxAge after
// it happened is abandoned. A thread's events go out one at a time, in order: its next
// event waits until the one before has ended. Delivery is at least once; the event's
// id stays the same across retries, for receivers to deduplicate on.
//
// Sign and Verify implement the signature: X-Threadwright-Signature is
// "v0=" + hex(HMAC-SHA256(secret, "v0:" + X-Threadwright-Request-Timestamp + ":" + body)).
package webhook
