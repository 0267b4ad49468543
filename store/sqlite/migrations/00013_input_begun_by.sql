-- The call that last began each input (docs/architecture.md, "Durable turns"): its
-- lease's owner and token and the holder's number for the call
-- (conversation.Store.Next), "" when none recorded one. A call retried after its
-- answer was lost finds its own name here and counts no second attempt.

-- +goose Up
ALTER TABLE inputs ADD COLUMN begun_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE inputs DROP COLUMN begun_by;
