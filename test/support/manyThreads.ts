/**
 * A big database for the inspector's scale tests: `count` threads of one
 * checkpoint each, inserted with SQL into this library's tables (migrated
 * first), one second of activity apart, newest `<prefix>000001`.
 */
import { admin } from "../../harness/databases.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"

export const insertThreads = async (url: string, count: number, prefix: string): Promise<void> => {
  await (await EffectCheckpointSaver.fromConnString(url)).close()
  await admin(async (client) => {
    await client.query(
      `INSERT INTO checkpoint_threads (thread_id, last_activity)
       SELECT '${prefix}' || lpad(i::text, 6, '0'), date_trunc('milliseconds', now()) - i * interval '1 second'
       FROM generate_series(1, ${count}) AS i`
    )
    await client.query(
      `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
       SELECT '${prefix}' || lpad(i::text, 6, '0'), '', id, NULL,
         jsonb_build_object('v', 4, 'id', id, 'ts', '2026-01-01T00:00:00.000Z',
           'channel_values', '{}'::jsonb, 'channel_versions', '{}'::jsonb, 'versions_seen', '{}'::jsonb),
         jsonb_build_object('source', 'input', 'step', -1, 'parents', '{}'::jsonb)
       FROM (SELECT i, '1ef00000-0000-6000-8000-' || lpad(to_hex(i), 12, '0') AS id
             FROM generate_series(1, ${count}) AS i) AS g`
    )
    await client.query("ANALYZE")
  }, url)
}
