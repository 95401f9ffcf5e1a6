/**
 * How managed storage lays out the Parquet files it compacts into, beside its other settings
 * (`StorageOptions`): part of the `storage` option.
 *
 * @example
 * const ep = await createEndpoints({ ...supabasePreset, storage: { dataDir: './data', typedColumns: false } });
 */
export interface StorageLayoutOptions {
  /**
   * Whether compaction writes each source's typed fields (its descriptor's `typedFields`) as
   * columns of their own beside `metadata` (default true): queries that read those fields then
   * skip parsing `metadata`. Off, the files hold `metadata` alone and the same queries compute the
   * fields from it; answers are the same either way (docs/durability.md, "Typed columns").
   */
  typedColumns?: boolean;
}
