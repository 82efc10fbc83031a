/**
 * RFC 9110 §13.1.2: does a GET/HEAD's `If-None-Match` name the representation tagged `current`? The
 * field is `*` (any current representation) or a comma-separated list of entity-tags, each strong
 * (`"x"`) or weak (`W/"x"`), compared weakly: the opaque parts equal, the W/ prefixes ignored. It was
 * compared whole with the tag, so a browser or proxy holding two versions (`"a", "b"`) or the strong
 * spelling of our weak tag was always given the full answer again.
 */
export function ifNoneMatchHits(header: string | undefined, current: string): boolean {
  if (!header) return false;
  const wanted = opaqueTag(current);
  if (wanted === undefined) return false;
  if (header.trim() === '*') return true;
  // An entity-tag's opaque part may hold commas (only `"` and controls are excluded), so tags are read
  // one by one rather than by splitting on commas.
  const tags = /\s*(?:W\/)?"([^"]*)"\s*(?:,|$)/gy;
  let match: RegExpExecArray | null;
  while ((match = tags.exec(header)) !== null) {
    if (match[1] === wanted) return true;
    if (tags.lastIndex >= header.length) break;
  }
  return false;
}

/** The quoted part of `"x"` or `W/"x"`, without its quotes. */
function opaqueTag(tag: string): string | undefined {
  return /^(?:W\/)?"([^"]*)"$/.exec(tag.trim())?.[1];
}
