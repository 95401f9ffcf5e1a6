// The write-ahead log's imports of the one implementation (storage/durable-fs.ts).
export { fsyncDir, isCode } from '../durable-fs';
