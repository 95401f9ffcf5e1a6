/**
 * A caller's text made safe to quote in a message: anything but printable ASCII becomes `?`, and
 * past `max` characters it is cut with `…` (a message never carries control characters, escapes
 * or a megabyte of someone's input).
 *
 * @example
 * printable('GET\r\nX', 32); // 'GET??X'
 * printable('a'.repeat(100), 8); // 'aaaaaaaa…'
 */
export function printable(text: string, max = 64): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
