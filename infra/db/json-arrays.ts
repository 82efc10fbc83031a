/**
 * Postgres refuses a jsonb value whose elements pass 255 MB ("total size of jsonb array elements exceeds
 * the maximum of 268435455 bytes"). The projections send a batch's rows as one JSON array to
 * `jsonb_to_recordset`; a rebuild's batch of 2,000 competitors whose four notes are full of characters
 * of three or four bytes comes near or over that, and a batch refused once is refused on every retry.
 * So a statement's rows go in arrays of at most this many bytes, one statement each, in the same
 * transaction.
 */
export const JSON_ARRAY_BYTES = 32 * 1024 * 1024;

/**
 * The records as JSON arrays of at most `maxBytes` bytes of UTF-8 each (a record larger than that alone
 * in its array), in order; none for no records.
 */
export function jsonArrays(records: readonly unknown[], maxBytes = JSON_ARRAY_BYTES): string[] {
  const arrays: string[] = [];
  let parts: string[] = [];
  let bytes = 2;
  for (const record of records) {
    const json = JSON.stringify(record);
    const size = Buffer.byteLength(json) + 1;
    if (parts.length > 0 && bytes + size > maxBytes) {
      arrays.push(`[${parts.join(',')}]`);
      parts = [];
      bytes = 2;
    }
    parts.push(json);
    bytes += size;
  }
  if (parts.length > 0) arrays.push(`[${parts.join(',')}]`);
  return arrays;
}
