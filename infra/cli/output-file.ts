import { createWriteStream, openSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { realpath, rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { interruptions } from './interruption.ts';

/** The output file cannot be written: the message says which file and why, in words. */
export class OutputFileError extends Error {
  override name = 'OutputFileError';
}

const reasons: Record<string, string> = {
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'its folder does not exist',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
};

/** Why a write failed, in words (a full disk), or the system's message for anything rarer. */
export const writeFailure = (error: unknown): string =>
  reasons[(error as NodeJS.ErrnoException).code ?? ''] ?? (error as Error).message;

/**
 * ENOENT also comes from a folder that exists but takes no new files (/proc): "its folder does not exist"
 * sent the operator looking for a folder that is there.
 */
const refused = (target: string, error: unknown): OutputFileError =>
  new OutputFileError(
    `cannot write ${target}: ${
      (error as NodeJS.ErrnoException).code === 'ENOENT' && isFolder(path.dirname(target))
        ? 'its folder does not take new files'
        : writeFailure(error)
    }`,
  );

const isFolder = (folder: string): boolean =>
  statSync(folder, { throwIfNoEntry: false })?.isDirectory() ?? false;

/** Opens a fresh file (or with `flags`), or fails with its reason before anything else happens. */
async function open(file: string, target: string, flags = 'wx'): Promise<WriteStream> {
  const stream = createWriteStream(file, { flags });
  try {
    await once(stream, 'open');
  } catch (error) {
    throw refused(target, error);
  }
  return stream;
}

/**
 * `lines`, remembering a failure of its own (the database): the pipeline destroys the file's stream with
 * that same error, so the stream's 'error' alone blamed the file ("--out: cannot write …").
 */
function watchSource(lines: AsyncIterable<string>): { source: AsyncIterable<string>; failed: () => unknown } {
  let failure: unknown;
  async function* source() {
    try {
      yield* lines;
    } catch (error) {
      failure = error;
      throw error;
    }
  }
  return { source: source(), failed: () => failure };
}

/**
 * Streams `lines` into `target` through a file beside it, renamed into place only once every line is
 * written and flushed: a failed or interrupted export leaves no partial file under the target's name and
 * never truncates an existing one. A target that cannot be written is refused before `lines` is read.
 */
export async function writeLinesAtomically(target: string, lines: AsyncIterable<string>): Promise<void> {
  const existing = await stat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw new OutputFileError(`cannot write ${target}: it is a folder`);
  // A pipe or a device (/dev/stdout, a FIFO) is written as it is: renaming over it replaced it with a
  // plain file (run as root, `--out /dev/null` replaced /dev/null), and it has nothing to truncate.
  if (existing && !existing.isFile()) return writeLinesInto(target, lines);
  // Through a symbolic link, the file it names is replaced, not the link.
  const file = existing ? await realpath(target) : target;
  const partial = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  // Watched before it exists. A signal that comes while the process has no listener for it is not
  // queued for JavaScript: the system ends the process at once. So a Ctrl-C between creating the file
  // and listening left it behind, even within one synchronous step (CI saw it twice).
  const keepOnSignal = removeOnSignal(partial);
  let fd: number;
  try {
    fd = openSync(partial, 'wx');
  } catch (error) {
    keepOnSignal();
    throw refused(target, error);
  }
  const out = createWriteStream(partial, { fd });
  let writeError: unknown;
  out.once('error', (error) => (writeError = error));
  const { source, failed } = watchSource(lines);
  try {
    await pipeline(Readable.from(source), out);
    await rename(partial, file).catch((error: unknown) => {
      throw (writeError = error);
    });
  } catch (error) {
    await rm(partial, { force: true });
    // The file's own failures (a full disk) are the file's; anything else (the database) passes through.
    throw error === writeError && error !== failed() ? refused(target, error) : error;
  } finally {
    keepOnSignal();
  }
}

/**
 * Until the returned function is called, Ctrl-C, a kill or a closed terminal removes `file` first and
 * then ends the process as the signal would have (exit status 128 + signal): an interrupted export
 * leaves no hidden partial file behind. (SIGKILL cannot be caught; its file has the process id in
 * its name, so it never collides with a later export.)
 */
function removeOnSignal(file: string): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    rmSync(file, { force: true });
    stopListening();
    process.kill(process.pid, signal);
  };
  const stopListening = () => {
    for (const signal of interruptions) process.off(signal, onSignal);
  };
  for (const signal of interruptions) process.on(signal, onSignal);
  return stopListening;
}

/** Streams `lines` into an existing pipe or device; its own failures (a full device) name the target. */
async function writeLinesInto(target: string, lines: AsyncIterable<string>): Promise<void> {
  const out = await open(target, target, 'a');
  let writeError: unknown;
  out.once('error', (error) => (writeError = error));
  const { source, failed } = watchSource(lines);
  try {
    await pipeline(Readable.from(source), out);
  } catch (error) {
    throw error === writeError && error !== failed() ? refused(target, error) : error;
  }
}

/**
 * Streams `lines` to standard output; true when all were written, false when the reader went away
 * first (`| head`): that is the reader's choice, not a failure.
 */
export async function writeLinesToStdout(lines: AsyncIterable<string>): Promise<boolean> {
  try {
    await pipeline(Readable.from(lines), process.stdout, { end: false });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') return false;
    throw error;
  }
}
