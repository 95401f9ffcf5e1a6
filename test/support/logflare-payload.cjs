// pino-logflare's onPreparePayload for log-endpoints (docs/ingest.md's pino setup): pino-logflare puts
// every field of a log call under `metadata`; logs.all looks for `project` at the top level.
const { defaultPreparePayload } = require('pino-logflare');

exports.preparePayload = (item, meta) => ({ ...defaultPreparePayload(item, meta), project: item.project });
