import { createServer, type RequestListener, type Server } from 'node:http';
import { answerUnreadableRequests } from './client-error.server.ts';

export interface EarlyServer {
  server: Server;
  /** From now on requests go to `app`. */
  serve(app: RequestListener): void;
}

/**
 * The HTTP server, listening before the first start writes anything (the admin, the default segments):
 * a taken port then stops the start before an admin exists whose generated password nobody saw. Until
 * `serve` hands it the app, every request is answered 503 "starting", which health checks read as not yet.
 */
export async function listenEarly(port: number, host: string): Promise<EarlyServer> {
  let handle: RequestListener = (_request, response) => {
    response.writeHead(503, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
      'Retry-After': '2',
    });
    response.end('Rivals is starting; try again in a moment.\n');
  };
  const server = createServer((request, response) => handle(request, response));
  answerUnreadableRequests(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    serve(app) {
      handle = app;
    },
  };
}
