import type pg from 'pg';

/**
 * Distinct statement texts this process will name. The texts given here are built by the code from
 * allow-listed pieces, so there are a few dozen at most; the bound only guarantees that a mistake (a
 * value interpolated into the text) cannot grow every connection's prepared statements without limit:
 * past it, statements simply run unnamed.
 */
const MAX_NAMED = 256;
const names = new Map<string, string>();

/**
 * A query for a statement run on every page view: named, so each connection parses and plans it once
 * and then only binds and executes it (on Postgres, planning these statements cost more than running
 * them). The name follows the text; the same text always gets the same name in this process.
 *
 * A rebuild's swap renames tables under these statements: Postgres re-plans a prepared statement whose
 * tables changed (tested in tests/integration/rebuild.test.ts). Only if a swapped table changed a selected
 * column's type would a prepared statement fail ("cached plan must not change result type"); the pool
 * destroys a connection whose query failed, so that costs one request per connection, once. Searches
 * stay unnamed: a generic plan cannot see how selective a search pattern is.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `rivals-read-${names.size + 1}`;
    names.set(text, name);
  }
  return name === undefined ? { text, values } : { name, text, values };
}
