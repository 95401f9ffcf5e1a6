-- wal.shipped-offsets: which events of one write-ahead segment of managed storage a table holds
-- already. The shipper asks before it sends a segment again (after a crash or a failed insert),
-- then inserts only the lines missing, so every acknowledged event ends up in the table once.
--
-- Table `wal_rows` (the shipper names the source's table, the Distributed one on a cluster):
-- timestamp (Int64, microseconds since the epoch, UTC), _wal_segment (String, the segment's id),
-- _wal_offset (UInt64, byte offset of the event's line in the segment).
--
-- Parameters:
--   segment  String  the segment's id: '<data dir instance>/<source>/<segment number>'
--   first    Int64   the earliest timestamp of the segment's events: with `last`, only the days
--                    (partitions) the segment touches are read
--   last     Int64   the latest timestamp of the segment's events
SELECT DISTINCT _wal_offset AS offset
FROM wal_rows
WHERE timestamp >= {first:Int64}
  AND timestamp <= {last:Int64}
  AND _wal_segment = {segment:String}
