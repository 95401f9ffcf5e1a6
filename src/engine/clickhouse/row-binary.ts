import type { ColumnEncoding } from './schema';

/**
 * Rows in ClickHouse's RowBinary format, column after column: (U)Int64 little-endian, String as a
 * LEB128 length and UTF-8 bytes, Nullable as a 1 (NULL) or 0 byte before the value, Array as a
 * LEB128 count and its items.
 */
export class RowBinaryWriter {
  private buffer = Buffer.allocUnsafe(1 << 20);
  private length = 0;
  rows = 0;

  /** Appends one row; `values` are in the order of `encodings`. */
  writeRow(encodings: readonly ColumnEncoding[], values: readonly unknown[]): void {
    for (let i = 0; i < encodings.length; i++) this.write(encodings[i]!, values[i] ?? null);
    this.rows++;
  }

  get byteLength(): number {
    return this.length;
  }

  /** The encoded rows so far; the writer starts over empty. */
  take(): Buffer {
    const out = Buffer.from(this.buffer.subarray(0, this.length));
    this.length = 0;
    this.rows = 0;
    return out;
  }

  private write(encoding: ColumnEncoding, value: unknown): void {
    switch (encoding) {
      case 'int64':
        this.reserve(8);
        this.buffer.writeBigInt64LE(BigInt(value as bigint | number), this.length);
        this.length += 8;
        return;
      case 'uint64':
        this.reserve(8);
        this.buffer.writeBigUInt64LE(BigInt(value as bigint | number), this.length);
        this.length += 8;
        return;
      case 'string':
        this.string(value === null ? '' : String(value));
        return;
      case 'nullable-string':
        if (this.nullFlag(value)) this.string(String(value));
        return;
      case 'nullable-float64':
        if (this.nullFlag(value)) {
          this.reserve(8);
          this.buffer.writeDoubleLE(Number(value), this.length);
          this.length += 8;
        }
        return;
      case 'nullable-int32':
        if (this.nullFlag(value)) {
          this.reserve(4);
          this.buffer.writeInt32LE(Number(value), this.length);
          this.length += 4;
        }
        return;
      case 'nullable-int64':
        if (this.nullFlag(value)) {
          this.reserve(8);
          this.buffer.writeBigInt64LE(BigInt(value as bigint | number), this.length);
          this.length += 8;
        }
        return;
      case 'string-array': {
        const items = (value ?? []) as readonly string[];
        this.leb128(items.length);
        for (const item of items) this.string(item);
        return;
      }
      case 'nullable-uint8':
        if (this.nullFlag(value)) {
          this.reserve(1);
          this.buffer[this.length++] = value ? 1 : 0;
        }
        return;
    }
  }

  /** Writes the Nullable marker; true when a value follows. */
  private nullFlag(value: unknown): boolean {
    this.reserve(1);
    this.buffer[this.length++] = value === null || value === undefined ? 1 : 0;
    return !(value === null || value === undefined);
  }

  private string(text: string): void {
    const bytes = Buffer.byteLength(text, 'utf8');
    this.leb128(bytes);
    this.reserve(bytes);
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  private leb128(value: number): void {
    this.reserve(10);
    let n = value;
    while (n >= 0x80) {
      this.buffer[this.length++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buffer[this.length++] = n;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(bigger, 0, 0, this.length);
    this.buffer = bigger;
  }
}
