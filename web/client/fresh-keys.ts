/** The hidden field every state-changing form carries (`CommandKeyField`, web/idempotency.server.ts). */
const KEY_FIELD = 'input[name="_idempotency_key"]';

/**
 * A new idempotency key. `crypto.randomUUID` exists only in secure contexts (https, localhost); a server
 * opened over plain http on a LAN address still gets a version-4 UUID from `getRandomValues`.
 */
export function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function renew(root: Element | Document): void {
  if (root instanceof Element && root.matches(KEY_FIELD)) (root as HTMLInputElement).value = newKey();
  for (const input of root.querySelectorAll<HTMLInputElement>(KEY_FIELD)) input.value = newKey();
}

/**
 * Each form's key stands for one intended change: submitting the same form twice, or again after a lost
 * answer, is that one change. HTML that arrives after the page loaded can carry keys that were already
 * used: a table refresh answered 304 from the browser's cache, a region refreshed or restored, a page
 * brought back by the Back button. Submitting such a form would be answered with the earlier change's
 * outcome and change nothing, so every key arriving that way is renewed before anyone can click it
 * (a mutation observer runs before the next input event).
 */
export function installFreshKeys(): void {
  new MutationObserver((records) => {
    for (const record of records)
      for (const node of record.addedNodes) if (node instanceof Element) renew(node);
  }).observe(document.body, { childList: true, subtree: true });
  window.addEventListener('pageshow', (event) => {
    if (event.persisted) renew(document);
  });
}
