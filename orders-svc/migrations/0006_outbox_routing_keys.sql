-- Gives the rows of the first orders outbox (no routing_key: written before migration 0003, or
-- by an orders-svc replica of that version) the routing key and content type of their event
-- type, as orders-svc writes them through the `outbox` crate. The relay's default encoding then
-- publishes them as relay-svc's former orders encoder did: the same routing key, properties and
-- chain headers, and a body byte for byte the same `OrderEvent` (the envelope's field 5 carries
-- the stored `OrderPayload` bytes where the encoder re-encoded the decoded message: the same
-- bytes for every payload orders-svc wrote). The one addition is the `aggregate_type` header
-- ('order', the column's default since 0003), which every row of the crate carries.
--
-- A row of another event type keeps its null routing key: the relay quarantines it ("no
-- routing key"), as it quarantined an unknown event type before. Quarantined rows get their key
-- too, so that moving one back publishes it.
--
-- relay-svc starts relaying a database only once this migration is applied (before it, it would
-- quarantine the rows this statement converts). A writer of the first format still running
-- after it (an orders-svc of before 0003) would write rows the relay quarantines: those
-- replicas must be gone before this migration runs.
update outbox
   set routing_key  = case event_type when 'OrderCreated' then 'order.created'
                                      else 'order.status_changed' end,
       content_type = coalesce(content_type, 'application/x-protobuf')
 where routing_key is null
   and event_type in ('OrderCreated', 'OrderStatusChanged');

update outbox_quarantine
   set routing_key  = case event_type when 'OrderCreated' then 'order.created'
                                      else 'order.status_changed' end,
       content_type = coalesce(content_type, 'application/x-protobuf')
 where routing_key is null
   and event_type in ('OrderCreated', 'OrderStatusChanged');
