import type { Endpoints } from '../api/create-endpoints';
import type { EndpointsOptions } from '../api/public-types';
import { openDrains, type Drains } from '../drains/open-drains';
import { DrainLog } from '../drains/drain-log';
import { DATADOG_URL_VARIABLE } from '../drains/wire-formats';
import type { StorageOptions } from '../managed/storage-options';
import { systemNow } from '../time/clock';
import type { CliIO } from './io';

/**
 * The log drains of a server command (`serve`, `clickhouse serve`), with a data dir only: what
 * `createEndpoints` is given (`segmentKeeper`: the drains read the write-ahead log, and keep what
 * they have yet to read when compaction is done with it), then `open` once the instance's sources are known,
 * and `close` when the server stopped. Their warnings go to stderr as the instance's do;
 * `LOG_ENDPOINTS_DATADOG_URL` replaces Datadog's intake.
 *
 * @example
 * const drains = serverDrains(settings.storage, io);
 * const ep = await createEndpoints({ ...options, ...drains.endpointsOptions });
 * await serveHttp(ep, { ...settings, drains: await drains.open(ep) }, io, intro);
 */
export function serverDrains(storage: StorageOptions | undefined, io: CliIO) {
  let drains: Drains | undefined;
  const log = new DrainLog();
  const endpointsOptions: Pick<EndpointsOptions, 'segmentKeeper'> = storage ? { segmentKeeper: log } : {};
  return {
    endpointsOptions,
    /** The drains kept in the data dir; a drains file that does not read closes `ep` and throws. */
    async open(ep: Endpoints): Promise<Drains | undefined> {
      if (!storage) return undefined;
      try {
        drains = await openDrains({
          dataDir: storage.dataDir,
          sources: ep.sources,
          log,
          datadogUrl: io.env[DATADOG_URL_VARIABLE] || undefined,
          onWarning: (warning) => io.stderr.write(`${systemNow().toISOString()} warning: ${warning.message}\n`),
        });
      } catch (error) {
        await ep.close();
        throw error;
      }
      return drains;
    },
    close(): void {
      drains?.close();
    },
  };
}
