import type { ChangeMessage } from '../realtime/change-message.ts';
import { notify } from './notices.ts';
import { refreshRegions } from './refresh-regions.ts';

const REFRESH_DEBOUNCE_MS = 200;
const STALE_AFTER_HIDDEN_MS = 30_000;

/**
 * Live updates (docs/behaviour.md §10): a Socket.IO client hears about projected changes and refreshes the table or
 * card in place, with a short notice of who changed what. Broadcasts are hints: after a reconnect, or
 * after the tab slept, the page refetches its regions rather than trusting it saw everything.
 */
export async function connectRealtime(): Promise<void> {
  const me = document.querySelector<HTMLMetaElement>('meta[name="user-id"]')?.content;
  if (!me) return;
  const { io } = await import('socket.io-client');
  const socket = io({ path: '/socket.io', transports: ['websocket'] });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let connectedBefore = false;
  let lastPosition = 0;
  let hiddenAt: number | undefined;

  const refreshSoon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void refreshRegions(), REFRESH_DEBOUNCE_MS);
  };

  socket.on('connect', () => {
    if (connectedBefore) refreshSoon();
    connectedBefore = true;
    document.documentElement.dataset.live = 'connected';
  });
  socket.on('disconnect', () => (document.documentElement.dataset.live = 'disconnected'));
  socket.on('change', (message: ChangeMessage) => {
    lastPosition = Math.max(lastPosition, message.position);
    document.documentElement.dataset.livePosition = String(lastPosition);
    // Refresh even for your own changes: you may have made them in another tab. Only other people's get a notice.
    const others = message.changes.filter((c) => c.actorId !== me);
    for (const change of others.slice(-3)) {
      notify(
        `${change.actorName}: ${change.summary}${change.competitorName && !change.summary.includes(change.competitorName) ? ` (${change.competitorName})` : ''}`,
        'info',
      );
    }
    refreshSoon();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') hiddenAt = Date.now();
    else if (hiddenAt !== undefined && Date.now() - hiddenAt > STALE_AFTER_HIDDEN_MS) refreshSoon();
  });
}
