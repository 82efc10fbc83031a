import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { configKeys, freePort } from '../../e2e/support/server.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** One Rivals process (web or worker) that the test can SIGKILL and start again on the same port. */
export class Instance {
  private child: ChildProcess | undefined;
  private killedOnPurpose = false;
  /** Exits nobody asked for: a process that died by itself. */
  readonly unexpectedExits: string[] = [];
  private output = '';

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async start(name: string, env: Record<string, string>): Promise<Instance> {
    const inherited = { ...process.env };
    for (const key of configKeys) delete inherited[key];
    const port = await freePort();
    const instance = new Instance(name, port, {
      ...inherited,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    await instance.start();
    return instance;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  logTail(): string {
    return this.output.slice(-4_000);
  }

  async start(): Promise<void> {
    this.killedOnPurpose = false;
    const child = spawn(process.execPath, ['--import', 'tsx', 'web/main.server.ts'], {
      cwd: repoRoot,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString('utf8')).slice(-20_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('exit', (code, signal) => {
      if (!this.killedOnPurpose) this.unexpectedExits.push(`${this.name} exited (${code ?? signal})`);
    });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`${this.name} exited while starting:\n${this.logTail()}`);
      const ready = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`${this.name} did not answer /healthz within 60 s:\n${this.logTail()}`);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    this.killedOnPurpose = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    this.killedOnPurpose = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 12_000);
    await exited;
    clearTimeout(timer);
  }
}
