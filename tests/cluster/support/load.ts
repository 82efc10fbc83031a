import { randomUUID } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import { laterMark, type LiveMark } from '#web/realtime/live-mark.ts';
import { TestClient } from '../../support/test-client.ts';

/** Waits before each resend of a request whose answer was lost, as the browser does (about 15 s in all). */
const RETRY_DELAYS_MS = [300, 1_000, 2_000, 3_000, 4_000, 5_000];
const RETRYABLE = new Set([502, 503, 504]);

export interface OpRecord {
  key: string;
  kind: 'note' | 'form';
  /** The final answer: an HTTP status, or 0 when the connection failed every time. */
  status: number;
  attempts: number;
  issuedAt: number;
  answeredAt: number;
}

export const answeredOk = (r: OpRecord) => r.status === 200 || r.status === 202 || r.status === 302;

/** A signed-in browser stand-in sending update-note calls and add-competitor forms, each with its key. */
export class LoadClient {
  readonly records: OpRecord[] = [];
  private running = false;
  private loop: Promise<void> | undefined;
  private sequence = 0;

  constructor(
    readonly client: TestClient,
    private readonly competitorIds: readonly string[],
    private readonly id: number,
  ) {}

  static async signIn(
    baseUrl: string,
    email: string,
    password: string,
    competitorIds: readonly string[],
    id: number,
  ) {
    const client = new TestClient(baseUrl);
    await client.signIn(email, password);
    return new LoadClient(client, competitorIds, id);
  }

  start(pauseMs: number): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.op(this.sequence % 5 === 4 ? 'form' : 'note');
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    })();
  }

  async pause(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async op(kind: OpRecord['kind']): Promise<void> {
    const key = randomUUID();
    const seq = this.sequence++;
    const issuedAt = Date.now();
    let status = 0;
    let attempts = 0;
    for (let attempt = 0; attempt <= RETRY_DELAYS_MS.length; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1]));
      attempts++;
      try {
        status = await this.send(kind, key, seq);
      } catch {
        status = 0;
      }
      if (status !== 0 && !RETRYABLE.has(status)) break;
    }
    this.records.push({ key, kind, status, attempts, issuedAt, answeredAt: Date.now() });
  }

  private async send(kind: OpRecord['kind'], key: string, seq: number): Promise<number> {
    const signal = AbortSignal.timeout(15_000);
    if (kind === 'note') {
      const competitorId = this.competitorIds[(this.id + seq) % this.competitorIds.length];
      const response = await fetch(`${this.client.baseUrl}/components/competitor-notes`, {
        method: 'POST',
        signal,
        headers: {
          Cookie: this.client.cookieHeader(),
          Origin: this.client.baseUrl,
          'Content-Type': 'application/json',
          'X-Requested-With': 'XMLHttpRequest',
          'X-CSRF-Token': this.client.csrfToken,
          'Idempotency-Key': key,
        },
        body: JSON.stringify({
          event: 'update-note',
          payload: { competitorId, column: 'general', value: `client ${this.id} op ${seq}` },
        }),
      });
      await response.arrayBuffer();
      return response.status;
    }
    const response = await fetch(`${this.client.baseUrl}/competitors/new`, {
      method: 'POST',
      signal,
      redirect: 'manual',
      headers: {
        Cookie: this.client.cookieHeader(),
        Origin: this.client.baseUrl,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        _csrf: this.client.csrfToken,
        _idempotency_key: key,
        name: `Load ${this.id}-${seq}-${key.slice(0, 6)}`,
        website: '',
        segmentId: 'smb',
        threat: 'medium',
        headquarters: '',
      }),
    });
    await response.arrayBuffer();
    return response.status;
  }
}

/**
 * A live page stand-in: a Socket.IO client with the page's catch-up rule (docs/behaviour.md, live
 * updates) — it keeps the latest mark applied (live-mark.ts) and, on `resync` or a reconnect, asks the
 * server's mark and takes it (the browser refetches its regions at that moment).
 */
export class LiveSocket {
  mark: LiveMark = '0:0';
  readonly seen = new Map<string, number>();
  private readonly socket: Socket;

  constructor(private readonly client: TestClient) {
    this.socket = io(client.baseUrl, {
      path: '/socket.io',
      transports: ['websocket'],
      extraHeaders: { Cookie: client.cookieHeader(), Origin: client.baseUrl },
      reconnectionDelay: 200,
      reconnectionDelayMax: 1_000,
    });
    let connectedBefore = false;
    this.socket.on('connect', () => {
      if (connectedBefore) void this.catchUp();
      connectedBefore = true;
    });
    this.socket.on('resync', () => void this.catchUp());
    this.socket.on('change', (message: { mark: LiveMark; touched: { commandId: string }[] }) => {
      this.mark = laterMark(this.mark, message.mark);
      for (const change of message.touched) this.seen.set(change.commandId, Date.now());
    });
  }

  get connected(): boolean {
    return this.socket.connected;
  }

  async catchUp(): Promise<void> {
    try {
      const response = await fetch(`${this.client.baseUrl}/live/position`, {
        headers: { Cookie: this.client.cookieHeader(), 'X-Requested-With': 'XMLHttpRequest' },
      });
      if (response.ok) this.mark = laterMark(this.mark, ((await response.json()) as { list: LiveMark }).list);
    } catch {
      // The next trigger tries again.
    }
  }

  close(): void {
    this.socket.close();
  }
}
