// A `--config` module with managed storage of its own (test/cli-config.test.ts): its data dir from
// the test, and a storage option that must survive a --data-dir given on the command line too.
const dataDir = process.env.LE_TEST_DATA ?? 'data';

export default {
  storage: { dataDir, sourceNames: { 'my-gateway': 'edgeLogs' } },
  duckdb: { threads: 1 },
};
