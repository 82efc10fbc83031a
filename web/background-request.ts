/**
 * The header a page sends on the requests it makes by itself, with nobody at the keyboard: the live
 * position check (every 20 s while the tab is visible), and the refreshes a change elsewhere
 * causes. Such a request is served as any other but is not activity: it does not hold off the idle end of
 * the session (web/auth/sessions.server.ts), or a tab left open on a screen nobody watches kept its
 * browser signed in until the session's absolute end (7 days) whatever the idle timeout.
 *
 * Sent by our own script only; a client leaving it out is counted as active, as before (it gains nothing
 * it could not get by asking for a page).
 */
export const BACKGROUND_HEADER = 'X-Rivals-Background';
