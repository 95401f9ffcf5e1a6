/**
 * JSON flattened to paths and values, for engines without a JSON parser (ClickHouse 18.16 has only
 * `visitParam*`, which find a key anywhere, nested ones first): every node under the root (objects,
 * arrays, their elements, scalars) as its path and its JSON text exactly as written. A path is
 * `.key` per object key (`\`, `.` and `[` in a key escaped with `\`) and `[i]` per array element:
 * `{"request":{"path":"/a","tags":[1]}}` gives `.request`, `.request.path`, `.request.tags`,
 * `.request.tags[0]` (children before their parent, elements in order). The root itself is not
 * listed (it is the column).
 *
 * @example
 * flattenJson('{"a":{"b":1}}'); // { paths: ['.a', '.a.b'], values: ['{"b":1}', '1'] }
 */
export function flattenJson(text: string | null): { paths: string[]; values: string[] } {
  const out = { paths: [] as string[], values: [] as string[] };
  if (text === null || text === '') return out;
  try {
    const end = new Flattener(text, out).node(skipSpace(text, 0), '', true);
    if (skipSpace(text, end) !== text.length) return { paths: [], values: [] };
  } catch {
    // Not JSON: no paths (every field reads as missing).
    return { paths: [], values: [] };
  }
  return out;
}

/** The path of keys (no array elements) as `flattenJson` writes it.  *
 * @example
 * jsonKeyPath(['request', 'a.b']); // '.request.a\\.b'
 */
export function jsonKeyPath(keys: readonly string[]): string {
  return keys.map((k) => `.${k.replace(/[\\.[]/g, (c) => `\\${c}`)}`).join('');
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  return at;
}

class Flattener {
  constructor(
    private readonly text: string,
    private readonly out: { paths: string[]; values: string[] },
  ) {}

  /** Reads the value at `at`, records it under `path` (unless it is the root); returns its end. */
  node(at: number, path: string, root = false): number {
    const c = this.text[at];
    let end: number;
    if (c === '{') end = this.object(at, path);
    else if (c === '[') end = this.array(at, path);
    else if (c === '"') end = this.string(at);
    else {
      const m = /^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null)/.exec(this.text.slice(at, at + 400));
      if (!m) throw new SyntaxError('not JSON');
      end = at + m[0].length;
    }
    if (!root) {
      this.out.paths.push(path);
      this.out.values.push(this.text.slice(at, end));
    }
    return end;
  }

  private object(at: number, path: string): number {
    let i = skipSpace(this.text, at + 1);
    if (this.text[i] === '}') return i + 1;
    for (;;) {
      if (this.text[i] !== '"') throw new SyntaxError('not JSON');
      const keyEnd = this.string(i);
      const key = JSON.parse(this.text.slice(i, keyEnd)) as string;
      i = skipSpace(this.text, keyEnd);
      if (this.text[i] !== ':') throw new SyntaxError('not JSON');
      i = skipSpace(this.text, this.node(skipSpace(this.text, i + 1), `${path}${jsonKeyPath([key])}`));
      if (this.text[i] === '}') break;
      if (this.text[i] !== ',') throw new SyntaxError('not JSON');
      i = skipSpace(this.text, i + 1);
    }
    return i + 1;
  }

  private array(at: number, path: string): number {
    let i = skipSpace(this.text, at + 1);
    if (this.text[i] === ']') return i + 1;
    for (let n = 0; ; n++) {
      i = skipSpace(this.text, this.node(i, `${path}[${n}]`));
      if (this.text[i] === ']') break;
      if (this.text[i] !== ',') throw new SyntaxError('not JSON');
      i = skipSpace(this.text, i + 1);
    }
    return i + 1;
  }

  private string(at: number): number {
    for (let i = at + 1; i < this.text.length; i++) {
      const c = this.text[i];
      if (c === '\\') i++;
      else if (c === '"') return i + 1;
    }
    throw new SyntaxError('not JSON');
  }
}

/**
 * The column of a JSON column's flattened paths (ClickHouse's tables; read by callers' BigQuery SQL).
 *
 * @example
 * flatPathsColumn('metadata'); // '_metadata_paths'
 */
export const flatPathsColumn = (column: string): string => `_${column}_paths`;

/**
 * The column of a JSON column's flattened values (their JSON text).
 *
 * @example
 * flatValuesColumn('metadata'); // '_metadata_values'
 */
export const flatValuesColumn = (column: string): string => `_${column}_values`;
