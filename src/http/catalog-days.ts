import { CATALOG_MAX_DAYS } from '../definitions/catalog';
import { InvalidParameterError } from '../errors';
import { parseQueryString, singleValues } from './query-string';

/** The `days` of `GET {base}/api/catalog?days=N`: absent or empty is the default, anything but 1–90 is a 400. */
export function catalogDays(search: string): number | undefined {
  const days = singleValues(parseQueryString(search), ['days']).days;
  if (days === undefined || days === '') return undefined;
  const n = /^\d{1,3}$/.test(days) ? Number(days) : NaN;
  if (!(n >= 1 && n <= CATALOG_MAX_DAYS)) {
    throw new InvalidParameterError('days', `Parameter "days" must be a whole number from 1 to ${CATALOG_MAX_DAYS}.`);
  }
  return n;
}
