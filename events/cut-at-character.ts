/**
 * At most `max` UTF-16 units of `value`, never ending in half of a character. A cut through an emoji (a
 * surrogate pair) leaves a lone surrogate: Postgres's jsonb refuses it (a projection that wrote one
 * would stop at that event for good) and every other reader shows a broken character. No imports: the
 * browser's data table cuts its search with it too.
 */
export function cutAtCharacter(value: string, max: number): string {
  if (value.length <= max) return value;
  const code = value.charCodeAt(max - 1);
  return value.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
