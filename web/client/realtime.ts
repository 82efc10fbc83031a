import { BACKGROUND_HEADER } from '../background-request.ts';
import type { AuditMessage } from '../realtime/audit-message.ts';
import type { ChangeMessage } from '../realtime/change-message.ts';
import { notify } from './notices.ts';
import { isShownByAnswer } from './own-changes.ts';
import { compareMarks, isLiveMark, laterMark, type LiveMark } from '../realtime/live-mark.ts';
import type { LivePositionAnswer } from '../realtime/live-marks.ts';
import type { ListChange } from '../realtime/affects-table.ts';
import {
  refreshAuditLog,
  refreshRegions,
  showsAuditLog,
  wouldRefresh,
  type RefreshScope,
} from './refresh-regions.ts';

/**
 * Changes heard within this long of the first are shown by one refresh. Not a debounce that restarts on
 * every change: under a steady stream (a change every 100 ms) that would never refresh at all.
 */
const REFRESH_BATCH_MS = 200;
/** A cheap head check while the tab is visible: catches anything a broadcast gap hid. */
const HEAD_CHECK_EVERY_MS = 20_000;

/**
 * Live updates (docs/behaviour.md §10): a Socket.IO client hears about projected changes and
 * refreshes the table or card in place, with a short notice of who changed what. Broadcasts are hints,
 * the mark is the truth (live-mark.ts): the tab keeps the latest read-model checkpoint it has applied and, whenever it may have
 * missed something (a reconnect, the server's `resync` after a Redis restart, waking from sleep, going
 * back online, and every 20 s while visible), compares it with the server's and refetches when behind.
 */
export async function connectRealtime(): Promise<void> {
  const me = document.querySelector<HTMLMetaElement>('meta[name="user-id"]')?.content;
  if (!me) return;
  const { io } = await import('socket.io-client');
  const socket = io({ path: '/socket.io', transports: ['websocket'] });
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Where the page stood when it was rendered: a change projected before this tab's socket joined is
  // then caught by the first head check. Undefined on a page rendered without it (its first check learns).
  let lastMark = renderedAt('live-position');

  const setMark = (mark: LiveMark) => {
    lastMark = lastMark === undefined ? mark : laterMark(lastMark, mark);
    document.documentElement.dataset.livePosition = lastMark;
  };

  let refreshes = 0;
  /** What the refresh at the end of the batch must cover. */
  let due: ListChange[] | 'all' = [];
  const refreshSoon = (scope: RefreshScope) => {
    if (!wouldRefresh(scope)) return;
    // Counted on the page, so a test can tell "nothing to do" from "a refresh is coming".
    document.documentElement.dataset.liveRefreshes = String(++refreshes);
    due = scope === 'all' || due === 'all' ? 'all' : [...due, ...scope];
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      const scopeNow = due;
      due = [];
      void refreshRegions(scopeNow);
    }, REFRESH_BATCH_MS);
  };

  /**
   * The audit log follows its own checkpoint: user changes and operator actions reach it and no other
   * read model, so the competitor list's mark never says it is behind.
   */
  let lastAudit = renderedAt('live-audit');
  let auditTimer: ReturnType<typeof setTimeout> | undefined;
  const setAudit = (mark: LiveMark) => {
    lastAudit = lastAudit === undefined ? mark : laterMark(lastAudit, mark);
    document.documentElement.dataset.liveAudit = lastAudit;
  };
  const refreshAuditSoon = () => {
    if (!showsAuditLog()) return;
    document.documentElement.dataset.liveRefreshes = String(++refreshes);
    if (auditTimer !== undefined) return;
    auditTimer = setTimeout(() => {
      auditTimer = undefined;
      void refreshAuditLog();
    }, REFRESH_BATCH_MS);
  };

  const checkPosition = async () => {
    try {
      const response = await fetch('/live/position', {
        credentials: 'same-origin',
        headers: {
          Accept: 'application/json',
          'X-Requested-With': 'XMLHttpRequest',
          [BACKGROUND_HEADER]: '1',
        },
      });
      if (!response.ok) return;
      const { list, auditMark, userId } = (await response.json()) as Partial<LivePositionAnswer>;
      if (!isLiveMark(list)) return;
      // Signed in as someone else now (another tab): this page is not theirs; it stays as it is.
      const pageUser = document.querySelector<HTMLMetaElement>('meta[name="user-id"]')?.content;
      if (pageUser && userId !== pageUser) return;
      // Signed in (the marks are for signed-in users only): a socket the server closed can open again.
      reopen();
      // Refetch when behind where the page stands (as rendered, or as last applied); a page that does
      // not know where it stands only learns it.
      if (lastMark !== undefined && compareMarks(list, lastMark) > 0) refreshSoon('all');
      setMark(list);
      if (isLiveMark(auditMark)) {
        if (lastAudit !== undefined && compareMarks(auditMark, lastAudit) > 0) refreshAuditSoon();
        setAudit(auditMark);
      }
    } catch {
      // Offline: the next trigger checks again.
    }
  };

  /**
   * The server closed the socket (its session ended: signed out, here or in another tab) or refused it;
   * Socket.IO does not reconnect by itself then. Once the browser is signed in again (a head check
   * answers), it is opened again, so live changes and their notices come back without a reload.
   */
  let closedByServer = false;
  function reopen(): void {
    if (!closedByServer) return;
    closedByServer = false;
    socket.connect();
  }
  socket.on('connect_error', () => {
    if (!socket.active) closedByServer = true;
  });

  let connectedBefore = false;
  socket.on('connect', () => {
    if (connectedBefore) void checkPosition();
    connectedBefore = true;
    document.documentElement.dataset.live = 'connected';
  });
  socket.on('disconnect', (reason) => {
    if (reason === 'io server disconnect') closedByServer = true;
    document.documentElement.dataset.live = 'disconnected';
  });
  socket.on('resync', () => void checkPosition());
  const onChange = (message: ChangeMessage) => {
    // The echo of this tab's own command: its answer carried the fresh regions (docs/change-path.md).
    const own = new Set(message.touched.filter((c) => isShownByAnswer(c.commandId)).map((c) => c.commandId));
    const fromElsewhere = message.touched.filter((c) => !own.has(c.commandId));
    if (fromElsewhere.length === 0 && message.more === 0) return;
    // Other people's changes get a notice; your own from another tab only refresh.
    const others = message.changes.filter((c) => c.actorId !== me && !own.has(c.commandId));
    for (const change of others.slice(-3)) {
      notify(
        `${change.actorName}: ${change.summary}${change.competitorName && !change.summary.includes(change.competitorName) ? ` (${change.competitorName})` : ''}`,
        'info',
      );
    }
    refreshSoon(message.more > 0 ? 'all' : fromElsewhere);
  };
  socket.on('change', (message: ChangeMessage) => {
    // Recorded once the message is handled: a page at this mark has decided what to do about it.
    try {
      onChange(message);
    } finally {
      if (isLiveMark(message.mark)) setMark(message.mark);
    }
  });
  // Every announcement is news: it follows a batch committed after this socket joined, so after the page
  // was read.
  socket.on('audit', (message: AuditMessage) => {
    try {
      refreshAuditSoon();
    } finally {
      if (isLiveMark(message.mark)) setAudit(message.mark);
    }
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') void checkPosition();
  });
  window.addEventListener('online', () => void checkPosition());
  setInterval(() => {
    if (document.visibilityState === 'visible') void checkPosition();
  }, HEAD_CHECK_EVERY_MS);
  void checkPosition();
}

/** A mark the server wrote into the page as it rendered it (`<meta name="live-…">`), if any. */
function renderedAt(name: 'live-position' | 'live-audit'): LiveMark | undefined {
  const content = document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content;
  return isLiveMark(content) ? content : undefined;
}
