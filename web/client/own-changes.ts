/**
 * This tab's own changes and their live echo. A change the tab sent is shown from its component answer
 * (which carries the fresh regions), so the live feed's echo of it is ignored — unless the answer could
 * not show it (not yet visible, or no regions): then the echo is wanted, and if it already came, the
 * refresh happens at once.
 */
const MAX_REMEMBERED = 500;

/** Command ids this tab sent whose echo it does not need. */
const sent = new Set<string>();
/** Echoes that were ignored, in case the answer later says it could not show the change. */
const ignored = new Set<string>();

const remember = (set: Set<string>, id: string) => {
  set.add(id);
  // Oldest first: a long-open tab forgets ids whose echo is long past.
  if (set.size > MAX_REMEMBERED) set.delete(set.values().next().value as string);
};

/** Called when a call is sent: its echo may come before its answer. */
export function markSent(commandId: string): void {
  remember(sent, commandId);
}

/** True when the live feed's change is this tab's own and its answer shows it. */
export function isShownByAnswer(commandId: string): boolean {
  if (!sent.has(commandId)) return false;
  remember(ignored, commandId);
  return true;
}

/** The answer could not show the change: let its echo refresh the page (now, if it already came). */
export function wantEcho(commandId: string, refresh: () => void): void {
  sent.delete(commandId);
  if (ignored.delete(commandId)) refresh();
}
