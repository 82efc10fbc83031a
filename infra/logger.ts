import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

export type { Logger };

/** Per-request context; every log line written while handling a request carries its id. */
export const requestContext = new AsyncLocalStorage<{ reqId: string }>();

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      mixin: () => {
        const store = requestContext.getStore();
        return store ? { reqId: store.reqId } : {};
      },
      // Every password field a form has (sign-in, add user, your own password), at the top or one level down.
      redact: [
        'req.headers.cookie',
        'req.headers.authorization',
        ...['password', 'currentPassword', 'newPassword', 'repeatPassword'].flatMap((field) => [
          field,
          `*.${field}`,
        ]),
      ],
    },
    destination ?? process.stdout,
  );
}
