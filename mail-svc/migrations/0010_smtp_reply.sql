-- The mail server's answer to each sent mail's message (e.g. `250 2.0.0 Ok: queued as 4Xz`): the
-- receipt an operator quotes to the provider when a customer says a mail never came. Null for the
-- log mailer and for mails sent before this migration.
alter table mails add column smtp_reply text;
