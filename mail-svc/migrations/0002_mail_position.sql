-- The order in which mails were queued. An identity value is taken inside the transaction that
-- holds the order's advisory lock, so for one order it follows the processing order exactly.
-- ListMails reports mails in this order: if an order's events were ever processed out of chain
-- order, its mails would show it (the checker and the tests compare it with the chain).
alter table mails add column position bigint generated always as identity;
create index mails_by_order_position on mails (order_id, position);
