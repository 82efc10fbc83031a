import { ConfigError } from '#infra/config.ts';
import { StartupError } from '#infra/errors.ts';

/**
 * The one line a failed start prints, naming what to change; undefined for a failure nobody foresaw,
 * which is printed with its stack trace. `env`: the variables the process started with.
 */
export function startFailureLine(error: unknown, env: NodeJS.ProcessEnv): string | undefined {
  if (error instanceof ConfigError || error instanceof StartupError) return error.message;
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (code === 'EADDRINUSE') return `Port ${env.PORT ?? 3000} is already in use. Set PORT to another port.`;
  if (code === 'EACCES' && syscall === 'listen')
    return `Invalid configuration: PORT="${env.PORT ?? ''}" — expected a port this user may open: from 1024 to 65535 (lower ones need administrator rights).`;
  if (['ENOTFOUND', 'EADDRNOTAVAIL', 'EAI_AGAIN'].includes(code ?? ''))
    return `Invalid configuration: HOST="${env.HOST ?? ''}" — expected an address of this machine (e.g. 127.0.0.1 or 0.0.0.0).`;
  return undefined;
}
