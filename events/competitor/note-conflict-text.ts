/**
 * The words of a note conflict (a note saved since the dialog opened), in one place: the decider writes
 * them with a UTC time for logs and the command line, the web with the time on the viewer's clock
 * (decision 0019). `when` is that time, already written, or undefined when unknown.
 */
export function noteConflictText(by: string | undefined, byYou: boolean, when: string | undefined): string {
  const at = when ? ` at ${when}` : '';
  if (byYou) return `You changed this note${at} in another tab or window, after you opened it here.`;
  return `${by ?? 'Someone'} changed this note${at}, after you opened it.`;
}
