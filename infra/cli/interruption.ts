/** The signals an operator sends to stop a command: Ctrl-C, a kill, a closed terminal. */
export const interruptions = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const names: Partial<Record<NodeJS.Signals, string>> = { SIGINT: 'Ctrl-C' };
/** How an operator would name the signal: Ctrl-C, or its own name. */
export const signalName = (signal: NodeJS.Signals): string => names[signal] ?? signal;

export interface Interruption {
  /** Aborted at the first Ctrl-C (or kill, or closed terminal): stop at the next safe point. */
  readonly signal: AbortSignal;
  /** The signal that asked to stop, if any. */
  readonly received: NodeJS.Signals | undefined;
  /** Stops listening: from now on a signal ends the process at once, as by default. */
  release(): void;
  /** Stops listening; if a signal asked to stop, ends the process as that signal would have. */
  end(): void;
}

/**
 * For a long job that can stop cleanly between steps (each stored whole): the first Ctrl-C asks it to
 * stop at its next safe point (`notice` says so), a second one ends the process at once. Once the job
 * has said how far it got, `end()` ends the process as the signal would have (exit status 128 + signal),
 * so a shell or script still sees an interrupted command.
 */
export function stopOnInterrupt(notice: (signal: NodeJS.Signals) => void): Interruption {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const stopListening = () => {
    for (const s of interruptions) process.off(s, onSignal);
  };
  function onSignal(signal: NodeJS.Signals) {
    if (received) {
      stopListening();
      process.kill(process.pid, signal);
      return;
    }
    received = signal;
    notice(signal);
    controller.abort();
  }
  for (const s of interruptions) process.on(s, onSignal);
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    release: stopListening,
    end() {
      stopListening();
      if (received) process.kill(process.pid, received);
    },
  };
}
