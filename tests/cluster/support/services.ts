import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../e2e/support/server.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Private Postgres, Redis and nginx for the cluster test, on loopback ports of their own. The test kills
 * and restarts them at will without touching the machine's shared services (which other suites use).
 */
export interface Service {
  port: number;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

async function postgresBin(): Promise<string> {
  const versions = (await readdir('/usr/lib/postgresql')).sort();
  const latest = versions.at(-1);
  if (!latest) throw new Error('no Postgres server binaries under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${latest}/bin`;
}

/** Runs as the postgres user when we are root (Postgres refuses to run as root). */
const asPostgres = (command: string, args: string[]) =>
  process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);

export async function startPostgres(): Promise<Service> {
  const bin = await postgresBin();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-cluster-pg-'));
  const data = path.join(dir, 'data');
  await mkdir(data);
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    await chown(data, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(data, 0o700);
  await asPostgres(`${bin}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const service: Service = {
    port,
    async start() {
      await asPostgres(`${bin}/pg_ctl`, ['-D', data, '-o', options, '-l', `${dir}/log`, '-w', 'start']);
    },
    async stop(mode = 'fast') {
      await asPostgres(`${bin}/pg_ctl`, ['-D', data, '-m', mode, '-w', 'stop']).catch(() => undefined);
    },
    async destroy() {
      await service.stop('immediate');
      await rm(dir, { recursive: true, force: true });
    },
  };
  await service.start();
  await run('psql', [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    'postgres',
    '-c',
    'CREATE DATABASE rivals',
  ]);
  return service;
}

export async function startRedis(): Promise<Service> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-cluster-redis-'));
  let child: ChildProcess | undefined;
  const service: Service = {
    port,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        { stdio: 'ignore' },
      );
      for (let i = 0; i < 100; i++) {
        const ok = await run('redis-cli', ['-p', String(port), 'ping']).then(
          (r) => r.stdout.trim() === 'PONG',
          () => false,
        );
        if (ok) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`redis on ${port} did not start`);
    },
    async stop() {
      // Like a crash of a Redis without persistence: everything in it is gone.
      await run('redis-cli', ['-p', String(port), 'shutdown', 'nosave']).catch(() => undefined);
      const exiting = child;
      if (exiting && exiting.exitCode === null) await new Promise((resolve) => exiting.once('exit', resolve));
    },
    async destroy() {
      await service.stop();
      child?.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
  await service.start();
  return service;
}

/**
 * nginx in front of the web instances, configured with the same proxy settings docker-compose uses, or
 * with `proxySettings` (directives for its one location) to stand for another proxy's.
 */
export async function startNginx(
  upstreams: number[],
  options: { proxySettings?: string } = {},
): Promise<Service> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-cluster-nginx-'));
  const conf = path.join(dir, 'nginx.conf');
  await writeFile(
    conf,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
  upstream rivals { ${upstreams.map((p) => `server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join(' ')} keepalive 16; keepalive_timeout 4s; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://rivals;
      ${options.proxySettings ?? `include ${path.join(repoRoot, 'infra/nginx/proxy.conf')};`}
    }
  }
}
`,
  );
  let child: ChildProcess | undefined;
  const service: Service = {
    port,
    async start() {
      child = spawn('nginx', ['-c', conf, '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      for (let i = 0; i < 100; i++) {
        if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          () => true,
          () => false,
        );
        if (ok) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`nginx on ${port} did not start: ${stderr}`);
    },
    async stop() {
      child?.kill('SIGQUIT');
    },
    async destroy() {
      // SIGTERM, not SIGKILL: the master takes its worker processes with it (a killed master leaves them).
      const master = child;
      if (master && master.exitCode === null) {
        const exited = new Promise((resolve) => master.once('exit', resolve));
        master.kill('SIGTERM');
        const timer = setTimeout(() => master.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  await service.start();
  return service;
}
