import { callComponent, type ComponentAnswer } from './component-call.ts';
import { newKey } from './fresh-keys.ts';
import { validateNote } from './note-value.ts';
import { notify } from './notices.ts';
import { refreshRegions, showChange } from './refresh-regions.ts';
import { sweetAlert, type Swal } from './sweetalert.ts';

interface NoteTarget {
  competitorId: string;
  column: string;
  version: number;
  value: string;
  canEdit: boolean;
}

const labels: Record<string, string> = {
  strengths: 'strengths',
  weaknesses: 'weaknesses',
  pricing: 'pricing',
  general: 'general',
};

/** SweetAlert2 collapses white space in `text`; a note keeps its line breaks (CSSOM: allowed by the CSP). */
const keepLineBreaks = (popup: HTMLElement): void => {
  const container = popup.querySelector<HTMLElement>('.swal2-html-container');
  if (container) container.style.whiteSpace = 'pre-wrap';
};

/**
 * The competitor notes dialog (docs/behaviour.md §5, §6): a textarea prompt titled "Notes", labelled
 * "Enter competitor notes", with a cancel button, prefilled with the existing note. Saving sends the
 * `update-note` event {competitorId, column, value}; a rejection is shown inside the dialog, which stays
 * open with the text. If someone else saved the note meanwhile, the user sees who, when and their text,
 * and chooses to overwrite (saved at once) or cancel (theirs stays).
 */
export async function openNotesDialog(target: NoteTarget): Promise<void> {
  const swal = await sweetAlert();
  if (!target.canEdit) {
    await swal.fire({
      titleText: 'Notes',
      text: target.value,
      confirmButtonText: 'Close',
      didOpen: keepLineBreaks,
    });
    return;
  }
  let expected = target.version;
  let value = target.value;
  const loading = () => !!document.querySelector('.swal2-loading');
  // The same text over the same version is the same change: Save pressed again after every answer was
  // lost sends it with the same key, so a save that did reach the server is answered, not made twice
  // (or shown as someone else's change to overwrite).
  let sent: { text: string; expected: number; key: string } | undefined;
  const send = async (text: string) => {
    if (sent?.text !== text || sent.expected !== expected) sent = { text, expected, key: newKey() };
    const answer = await callComponent(
      'competitor-notes',
      {
        event: 'update-note',
        // Composed (NFC), as the server counts and stores it: a note pasted decomposed (NFD, as macOS
        // file names and some pastes are) can be three times the bytes of the same note composed, and
        // was refused as too large although the note is within its 10,000 characters.
        payload: { competitorId: target.competitorId, column: target.column, value: text.normalize('NFC') },
        expect: { version: expected },
      },
      sent.key,
    );
    // Set aside by the server after failing on it: that key can never save, so the next Save (or
    // Overwrite) is a new attempt, under a new key (events/store/command-inbox.ts, `givenUp`).
    if (answer.status === 'rejected' && answer.details?.setAside === true) sent = undefined;
    return answer;
  };

  /** The editor, optionally opened with a rejection to show; the answer of its save, or undefined if cancelled. */
  const edit = async (rejection?: string): Promise<ComponentAnswer | undefined> => {
    const opened = value;
    for (;;) {
      let typed = value;
      const answer = await editOnce(rejection, (text) => (typed = text));
      if (answer !== 'dismissed') return answer;
      // Escape or a click beside the dialog, after typing: ask before the typing is gone. Cancel is a
      // decision and closes at once (docs/behaviour.md §5).
      if (typed === opened || (await discardConfirmed(swal))) return undefined;
      value = typed;
      rejection = undefined;
    }
  };

  /** One showing of the editor: its save's answer, undefined after Cancel, 'dismissed' after Escape or a click outside. */
  const editOnce = async (
    rejection: string | undefined,
    onClose: (typed: string) => void,
  ): Promise<ComponentAnswer | undefined | 'dismissed'> => {
    let answer: ComponentAnswer | undefined;
    const result = await swal.fire({
      titleText: 'Notes',
      input: 'textarea',
      inputLabel: 'Enter competitor notes',
      inputValue: value,
      // No `maxlength`: the browser would cut a long paste short, silently. The validator says so instead.
      inputAttributes: { 'aria-label': 'Enter competitor notes' },
      showCancelButton: true,
      confirmButtonText: 'Save',
      cancelButtonText: 'Cancel',
      showLoaderOnConfirm: true,
      inputValidator: (v: string) => validateNote(v),
      didOpen: rejection ? () => swal.showValidationMessage(rejection) : undefined,
      preConfirm: async (v: string) => {
        value = v;
        answer = await send(v);
        if (answer.status === 'rejected' && answer.code !== 'conflict') {
          swal.showValidationMessage(answer.message);
          return false;
        }
        return true;
      },
      // While a save is on its way the dialog stays: closed, its outcome (a refusal, a lost answer)
      // would be shown to no one, and the text would be gone with it.
      allowOutsideClick: () => !loading(),
      allowEscapeKey: () => !loading(),
      willClose: (popup) => onClose(popup.querySelector('textarea')?.value ?? value),
    });
    if (result.isConfirmed) return answer;
    return result.dismiss === 'esc' || result.dismiss === 'backdrop' ? 'dismissed' : undefined;
  };

  let answer = await edit();
  while (answer?.status === 'rejected') {
    // Conflict: someone saved this note after the dialog opened. Overwrite saves mine over theirs at once.
    const details = answer.details ?? {};
    const theirs = typeof details.currentValue === 'string' ? details.currentValue : '';
    // Saved by this user in another tab: "their text" would name someone else.
    const saved = details.changedByYou === true ? 'The saved text' : 'Their text';
    const keep = details.changedByYou === true ? 'keep the saved one' : 'keep theirs';
    let overwrite: ComponentAnswer | undefined;
    const choice = await swal.fire({
      titleText: 'This note was changed meanwhile',
      text: `${answer.message}\n\n${saved}:\n${theirs}\n\nOverwrite it with yours, or cancel and ${keep}?`,
      icon: 'warning',
      didOpen: keepLineBreaks,
      showCancelButton: true,
      confirmButtonText: 'Overwrite with mine',
      cancelButtonText: 'Cancel',
      showLoaderOnConfirm: true,
      preConfirm: async () => {
        expected = Number(details.currentVersion ?? expected);
        overwrite = await send(value);
        return true;
      },
      allowOutsideClick: () => !loading(),
      allowEscapeKey: () => !loading(),
    });
    if (!choice.isConfirmed || !overwrite) {
      await refreshRegions();
      return;
    }
    answer = overwrite;
    // Any other rejection (deleted meanwhile, too long…) reopens the editor with my text and the message.
    if (answer.status === 'rejected' && answer.code !== 'conflict') answer = await edit(answer.message);
  }
  if (!answer) return;
  notify(savedNotice(answer, labels[target.column] ?? target.column));
  await showChange(answer);
}

/** Asked when typing would be lost by Escape or a click outside: the safe answer is the focused one. */
async function discardConfirmed(swal: Swal): Promise<boolean> {
  const choice = await swal.fire({
    titleText: 'Discard your changes?',
    text: 'What you typed in this note has not been saved.',
    icon: 'warning',
    showCancelButton: true,
    confirmButtonText: 'Discard',
    cancelButtonText: 'Keep editing',
    focusCancel: true,
  });
  return choice.isConfirmed;
}

/** What the user is told once a save was accepted: saved and shown, or saved and about to show. */
export function savedNotice(answer: ComponentAnswer, column: string): string {
  if (answer.status === 'pending') return answer.message;
  if (answer.status === 'accepted' && !answer.visible)
    return `Saved the ${column} note; the page will show it in a moment.`;
  return `Saved the ${column} note.`;
}

export function installNotesDialog(): void {
  document.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-note]');
    if (!button || button.disabled) return;
    event.preventDefault();
    const { competitorId = '', column = '', version = '0', value = '', canEdit } = button.dataset;
    // Focus comes back to this button, or to its fresh copy when the save re-rendered the row or card
    // it was in (web/client/sweetalert.ts).
    void openNotesDialog({
      competitorId,
      column,
      version: Number(version),
      value,
      canEdit: canEdit === 'true',
    });
  });
}
