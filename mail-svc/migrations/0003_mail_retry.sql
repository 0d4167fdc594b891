-- Each mail's own retry schedule. A temporary rejection of this mail (a 4xx for its recipient or
-- its message: greylisting, a full mailbox) is committed here and the mail waits until
-- next_attempt_at, while every other order's mails go on; its own order's later mails wait for it
-- (the claim takes an order's earliest unsent mail only). A failure of the whole SMTP session (the
-- server down, a wrong password, a rejected sender) is no attempt of any mail and leaves no trace
-- here: the mailer's circuit breaker backs off for everybody instead.
--
-- attempts counts the deliveries the server answered for this mail: each deferral, and the final
-- acceptance or rejection. last_error (0001) keeps the latest rejection's text.
alter table mails add column attempts integer not null default 0;
-- null: due now.
alter table mails add column next_attempt_at timestamptz;
