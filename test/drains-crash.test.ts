import { afterEach, describe, expect, it } from 'vitest';
import { serveWithDrains } from './support/drains-serve';
import { drainReceiver } from './support/drain-receiver';
import { tempDir } from './support/log-files';

const serve = (dataDir: string) => serveWithDrains(dataDir);

describe('log drains across kill -9', () => {
  const tmp = tempDir('le-drains-crash-');
  let sink: Awaited<ReturnType<typeof drainReceiver>> | undefined;
  afterEach(async () => {
    await sink?.close();
    tmp.cleanup();
  });

  it('a drain made before a kill -9 is kept and forwards what is ingested after the restart; one deleted before a kill -9 stays gone', async () => {
    sink = await drainReceiver();
    const first = await serve(tmp.dir);
    const kept = await first.drain('webhook', { url: `${sink.url}/kept`, http: 'http1', gzip: false, headers: {} }, `${sink.url}/kept`);
    await first.ingest('e', 0, 5);
    await sink.until(() => sink!.webhookIds('/kept').length >= 5);
    await first.kill();

    const second = await serve(tmp.dir);
    expect(((await second.studio('GET', '/api/backends?metadata[type]=log-drain')).json as { token: string }[]).map((d) => d.token)).toEqual([kept.token]);
    await second.ingest('e', 5, 5);
    await sink.until(() => sink!.webhookIds('/kept').includes('e9'));
    const ids = sink.webhookIds('/kept');
    // Every event at least once, in order. The kill came as the receiver got the first five: their
    // batch was in flight (its cursor not yet written), so it may come once more, and nothing else does.
    const once = Array.from({ length: 10 }, (_, k) => `e${k}`);
    expect([once, [...once.slice(0, 5), ...once]]).toContainEqual(ids);
    expect((await second.studio('DELETE', `/api/backends/${kept.token}`)).status).toBe(204);
    await second.kill();

    const third = await serve(tmp.dir);
    expect((await third.studio('GET', '/api/backends?metadata[type]=log-drain')).json).toEqual([]);
    expect((await third.studio('GET', `/api/backends/${kept.token}`)).status).toBe(404);
    // A new drain gets the next events; the deleted one gets nothing more.
    await third.drain('webhook', { url: `${sink.url}/new`, http: 'http1', gzip: false, headers: {} }, `${sink.url}/new`);
    await third.ingest('e', 10, 1);
    await sink.until(() => sink!.webhookIds('/new').includes('e10'));
    expect(sink.webhookIds('/kept')).toEqual(ids);
    await third.kill();
  });
});
