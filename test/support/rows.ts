/** Rows as the SQL driver's wide reads return them (see `sql/Projection.ts`), for tests of their decoders. */
import type { ThreadRow, TupleRow } from "../../src/internal/sql/Projection.ts"

/** A checkpoint of thread "t" as a tuple row: no blobs, writes, bases or pieces. */
export const tupleRow = (checkpoint_id: string, fields: Partial<TupleRow> = {}): TupleRow => ({
  thread_id: "t",
  checkpoint_ns: "",
  checkpoint_id,
  parent_checkpoint_id: null,
  checkpoint: { v: 4, id: checkpoint_id, ts: "", channel_versions: {}, versions_seen: {} },
  metadata: "{\"step\":1}",
  blob_channels: null,
  blob_versions: null,
  blob_types: null,
  blob_values: null,
  write_task_ids: null,
  write_task_paths: null,
  write_idxs: null,
  write_channels: null,
  write_types: null,
  write_values: null,
  piece_hashes: null,
  piece_values: null,
  piece_threads: null,
  ...fields
})

/** An empty thread as the thread projection returns it: null where a table has no rows. */
export const emptyThreadRow: ThreadRow = {
  last_activity: null,
  checkpoint_namespaces: null,
  checkpoint_ids: [],
  checkpoint_parents: [],
  checkpoint_headers: [],
  checkpoint_metadata: [],
  blob_namespaces: null,
  blob_channels: [],
  blob_versions: [],
  blob_types: [],
  blob_values: [],
  blob_bases: [],
  blob_keeps: [],
  write_namespaces: null,
  write_checkpoint_ids: [],
  write_task_ids: [],
  write_task_paths: [],
  write_idxs: [],
  write_channels: [],
  write_types: [],
  write_values: [],
  piece_hashes: null,
  piece_values: []
}
