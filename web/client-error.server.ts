import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** What a person is told when Node cannot even read the request, so the app never sees it. */
const answers: Record<string, [status: number, text: string]> = {
  HPE_HEADER_OVERFLOW: [
    431,
    "The request's headers are too large (usually too many or too large cookies). Clear this site's cookies and try again.",
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request took too long to arrive. Try again.'],
};
const unreadable: [number, string] = [400, 'The request could not be read. Nothing was changed.'];

/**
 * Requests Node's parser refuses (headers over its limit, a malformed request line, a request too slow to
 * arrive) are answered here, in a sentence, instead of Node's empty 431/400 answer; a connection already
 * gone is only closed. Nothing of the app ran, so nothing was changed.
 */
export function answerUnreadableRequests(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, text] = answers[error.code ?? ''] ?? unreadable;
    const body = `${text}\n`;
    socket.end(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
        'Content-Type: text/plain; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Cache-Control: no-store',
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}
