import type { SweetAlertOptions, SweetAlertResult } from 'sweetalert2';
import { refocus } from './keep-focus.ts';

export type Swal = {
  fire(options: SweetAlertOptions): Promise<SweetAlertResult<unknown>>;
  showValidationMessage(message: string): void;
};

let loading: Promise<Swal> | undefined;

/**
 * SweetAlert2, loaded on first use. The ESM build is used because the default entry injects a
 * <style> tag that the Content-Security-Policy blocks; its stylesheet ships inside app.css.
 * Every dialog makes the page behind it inert while open (see `withInertPage`) and gives focus back
 * to what had it, or to its fresh copy (see `returnFocus`).
 */
export function sweetAlert(): Promise<Swal> {
  loading ??= import('sweetalert2/dist/sweetalert2.esm.js').then((m) =>
    withInertPage((m as unknown as { default: Swal }).default),
  );
  return loading;
}

/** Marks the elements this module made inert, so closing undoes only those. */
const MARK = 'data-inert-behind-dialog';

/**
 * SweetAlert2 hides the page behind a dialog from screen readers (aria-hidden) and keeps Tab inside
 * the dialog, but the page stays focusable and clickable by other means (a screen reader's own
 * navigation, find-in-page, a script's focus()): hidden yet focusable, which WCAG's name-role-value
 * and axe's aria-hidden-focus flag. `inert` closes that: nothing behind the dialog takes focus or
 * input until it closes. Undone as the dialog starts closing, so SweetAlert2 can return focus to
 * the button that opened it.
 */
function withInertPage(swal: Swal): Swal {
  const fire = swal.fire.bind(swal);
  return {
    showValidationMessage: swal.showValidationMessage.bind(swal),
    fire: (options) => {
      opener ??= document.activeElement;
      return fire({
        ...options,
        didOpen: (popup) => {
          makePageInert(popup);
          options.didOpen?.(popup);
        },
        willClose: (popup) => {
          releasePage();
          options.willClose?.(popup);
        },
        didClose: () => {
          returnFocus();
          options.didClose?.();
        },
      });
    },
  };
}

/** What had focus when the first of a run of dialogs opened (one may open another, as Save's questions). */
let opener: Element | null = null;

/**
 * SweetAlert2 gives focus back to what had it when the dialog opened, 100 ms after the dialog has gone.
 * A live refresh may have replaced that button meanwhile (the table, the /ops status): focus would go
 * nowhere, and a keyboard user would start again from the top of the page. It goes to the same control
 * in the fresh copy instead. Runs once the last dialog of a run has closed, after SweetAlert2's attempt.
 */
function returnFocus(): void {
  if (document.querySelector('.swal2-container')) return;
  const gone = opener;
  opener = null;
  const lost = !document.activeElement || document.activeElement === document.body;
  if (gone instanceof HTMLElement && !gone.isConnected && lost) refocus(gone);
}

function makePageInert(popup: HTMLElement): void {
  for (const element of Array.from(document.body.children)) {
    if (!(element instanceof HTMLElement) || element.contains(popup) || element.inert) continue;
    element.inert = true;
    element.setAttribute(MARK, '');
  }
}

function releasePage(): void {
  for (const element of Array.from(document.querySelectorAll<HTMLElement>(`[${MARK}]`))) {
    element.inert = false;
    element.removeAttribute(MARK);
  }
}
